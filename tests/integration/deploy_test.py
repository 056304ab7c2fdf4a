"""What can be checked of deploy/ without a fleet: every YAML file parses (Kubernetes
manifests, the playbook), the systemd unit passes `systemd-analyze verify`, the playbook
passes `ansible-playbook --syntax-check`, and the example inventory gives the controller the
hosts it names. Nothing is installed or started on this machine."""

import glob
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEPLOY = os.path.join(SOURCE, "deploy")


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(stormark VERSION (\S+)", f.read()).group(1)


def package_names(depends):
    """["libc6", "libssl3", ...] of a Depends field's text."""
    return sorted({d.strip().split()[0] for d in depends.split(",") if d.strip()})


def shlibdeps(binary, work):
    """The packages dpkg-shlibdeps says `binary` needs (what CPack puts in Depends)."""
    os.makedirs(os.path.join(work, "debian"), exist_ok=True)
    with open(os.path.join(work, "debian", "control"), "w") as f:
        f.write("Source: probe\n\nPackage: probe\nArchitecture: any\n")
    done = subprocess.run(["dpkg-shlibdeps", "-O", "-e", os.path.abspath(binary)], cwd=work,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    line = [l for l in done.stdout.splitlines() if l.startswith("shlibs:Depends=")][0]
    return package_names(line.split("=", 1)[1])


def agent_recommends():
    """The package names of the agent package's Recommends (cmake/Packaging.cmake)."""
    with open(os.path.join(SOURCE, "cmake", "Packaging.cmake"), encoding="utf-8") as f:
        match = re.search(r'CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS "([^"]*)"', f.read())
    return [item.split()[0] for item in match.group(1).split(",")] if match else []


def dockerfile_runtime_stage():
    """The instructions of the Dockerfile's last stage, continuation lines joined."""
    with open(os.path.join(DEPLOY, "container", "Dockerfile"), encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"\\\n", " ", text)
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    last_from = max(i for i, l in enumerate(lines) if l.startswith("FROM "))
    return text, lines[last_from:]


class DeployTest(h.StormarkTestCase):

    def test_every_yaml_file_parses(self):
        import yaml  # python3-yaml, from scripts/install-deps.sh
        files = glob.glob(os.path.join(DEPLOY, "**", "*.y*ml"), recursive=True)
        # The packaged agent config is all comments on purpose (test below).
        files.remove(os.path.join(DEPLOY, "debian", "agent.yaml"))
        self.assertGreaterEqual(len(files), 3, files)
        kinds = []
        for path in files:
            with open(path, encoding="utf-8") as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
            self.assertTrue(docs, path)
            kinds += [d.get("kind") for d in docs if isinstance(d, dict)]
        for kind in ("DaemonSet", "Service", "Job", "ConfigMap"):
            self.assertIn(kind, kinds)
        # The headless Service the controller's --agents-dns resolves.
        with open(os.path.join(DEPLOY, "kubernetes", "stormark-agent.yaml")) as f:
            service = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "Service"][0]
        self.assertEqual(service["spec"]["clusterIP"], "None")

    def test_agent_configs_in_manifests_are_accepted_by_the_agent_parser(self):
        import yaml
        with open(os.path.join(DEPLOY, "kubernetes", "stormark-agent.yaml")) as f:
            config_map = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "ConfigMap"][0]
        work = self.make_dir()
        text = config_map["data"]["agent.yaml"].replace("/srv/stormark", work)
        # The TLS files do not exist here: the agent must fail on them, not on the config.
        config = self.write_file(os.path.join(work, "agent.yaml"), text)
        result = self.run_agent_binary(["--listen", "127.0.0.1:0", "--config", config])
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("/etc/stormark/tls/ca.crt", result.stderr)

    def test_packaged_config_allows_nothing_until_a_target_is_named(self):
        work = self.make_dir()
        config = os.path.join(work, "agent.yaml")
        shutil.copyfile(os.path.join(DEPLOY, "debian", "agent.yaml"), config)
        os.chmod(config, 0o644)
        result = self.run_agent_binary(["--listen", f"unix:{work}/agent.sock", "--config", config])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 2, result.describe())
        self.assertIn("it needs a 'targets:' map", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(work, "agent.sock")))

    @unittest.skipUnless(shutil.which("systemd-analyze"), "needs systemd-analyze")
    def test_systemd_unit_verifies(self):
        work = self.make_dir()
        with open(os.path.join(DEPLOY, "systemd", "stormark-agent.service")) as f:
            unit = f.read()
        # verify insists that ExecStart exists: point it at the built agent.
        unit = unit.replace("/usr/bin/stormark-agent",
                            os.path.abspath(h.binary("stormark-agent")))
        path = self.write_file(os.path.join(work, "stormark-agent.service"), unit)
        done = subprocess.run(["systemd-analyze", "verify", "--man=no", path],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        problems = [l for l in done.stderr.splitlines() if "stormark-agent.service" in l]
        self.assertEqual(problems, [], done.stderr)

    def test_unit_serves_the_socket_and_remote_use_is_mutual_tls(self):
        with open(os.path.join(DEPLOY, "systemd", "stormark-agent.service")) as f:
            unit = f.read()
        self.assertIn("\nRuntimeDirectory=stormark\n", unit)
        exec_start = [l for l in unit.splitlines() if l.startswith("ExecStart=")]
        self.assertEqual(len(exec_start), 1, exec_start)
        self.assertNotIn("--listen", exec_start[0], "the unit serves the default unix socket")
        self.assertNotIn("--insecure", exec_start[0])
        # The playbook's drop-in listens on TCP; its agent.yaml makes that mutual TLS.
        templates = os.path.join(DEPLOY, "ansible", "templates")
        with open(os.path.join(templates, "local.conf.j2")) as f:
            drop_in = f.read()
        self.assertIn("--listen 0.0.0.0:{{ stormark_port }}", drop_in)
        self.assertNotIn("--insecure", drop_in)
        with open(os.path.join(templates, "agent.yaml.j2")) as f:
            self.assertRegex(f.read(), r"(?m)^tls:")
        import yaml
        with open(os.path.join(DEPLOY, "kubernetes", "stormark-agent.yaml")) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        config_map = [d for d in docs if d.get("kind") == "ConfigMap"][0]
        for name, text in config_map["data"].items():
            self.assertRegex(text, r"(?m)^tls:", name)
        for daemon_set in [d for d in docs if d.get("kind") == "DaemonSet"]:
            args = daemon_set["spec"]["template"]["spec"]["containers"][0]["args"]
            self.assertNotIn("--insecure", args)

    @unittest.skipUnless(shutil.which("ansible-playbook"), "needs ansible-core")
    def test_playbook_passes_syntax_check(self):
        env = dict(os.environ, ANSIBLE_LOCAL_TEMP=self.make_dir(),
                   ANSIBLE_HOME=self.make_dir(), ANSIBLE_NOCOLOR="1")
        done = subprocess.run(
            ["ansible-playbook", "--syntax-check", "-i",
             os.path.join(DEPLOY, "ansible", "inventory.ini"),
             os.path.join(DEPLOY, "ansible", "stormark-agent.yml")],
            capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    @unittest.skipUnless(shutil.which("dpkg-shlibdeps"), "needs dpkg-dev")
    def test_container_image_installs_the_packages_and_so_what_shlibdeps_lists(self):
        text, stage = dockerfile_runtime_stage()
        self.assertIn("make deb", text, "the build stage makes the packages")
        copies = [l for l in stage if l.startswith("COPY ")]
        self.assertTrue(any("stormark-agent_*.deb" in l for l in copies), copies)
        installs = [l for l in stage if "apt-get install" in l]
        self.assertEqual(len(installs), 1, stage)
        words = installs[0].split("apt-get install", 1)[1].split("&&")[0].split()
        named = [w for w in words if not w.startswith("-")]
        self.assertIn("/tmp/debs/*.deb", named, "apt installs the packages, with their Depends")
        self.assertFalse([l for l in stage if "dpkg -i" in l], "dpkg -i would skip Depends")
        # The image's packages: the .debs' Depends plus what the Dockerfile names. Every
        # library dpkg-shlibdeps finds for the binaries is in the .debs' Depends, and the only
        # libraries the Dockerfile names are the agent's Recommends (libnbd and libiscsi, which
        # it loads when a target needs them: --no-install-recommends leaves them out).
        work = self.make_dir()
        needed = {name: shlibdeps(h.binary(name), os.path.join(work, name))
                  for name in ("stormark-agent", "stormark")}
        for lib in ("liburing2", "libgrpc++1.51"):
            self.assertIn(lib, needed["stormark-agent"])
        for lib in ("libiscsi7", "libnbd0"):
            self.assertNotIn(lib, needed["stormark-agent"], "loaded when needed, not linked")
        self.assertIn("libcurl4", needed["stormark"])
        self.assertEqual(sorted(w for w in named if w.startswith("lib")),
                         sorted(agent_recommends()), named)
        debs = os.path.join(os.path.dirname(os.path.abspath(h.bin_dir())), "deb")
        for name, libraries in needed.items():
            deb = os.path.join(debs, f"{name}_{project_version()}_amd64.deb")
            if not os.path.exists(deb):
                continue  # Not built here (make deb); package_test checks the packages.
            depends = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True,
                                     text=True, timeout=60).stdout
            extra = ["adduser"] if name == "stormark-agent" else []
            self.assertEqual(package_names(depends), sorted(libraries + extra), deb)

    def test_playbook_installs_the_package_and_templates_the_config(self):
        import yaml
        with open(os.path.join(DEPLOY, "ansible", "stormark-agent.yml")) as f:
            play = yaml.safe_load(f)[0]
        tasks = play["tasks"]
        apt = [t["ansible.builtin.apt"] for t in tasks if "ansible.builtin.apt" in t]
        debs = [a for a in apt if "deb" in a]
        self.assertEqual(len(debs), 1, "one apt task installs the .deb")
        self.assertIn("force-confold", debs[0].get("dpkg_options", ""))
        # The other installs the agent's Recommends, which apt's deb: install leaves out.
        self.assertEqual([sorted(a["name"]) for a in apt if "deb" not in a],
                         [sorted(agent_recommends())])
        self.assertRegex(play["vars"]["stormark_agent_deb"],
                         rf"stormark-agent_{re.escape(project_version())}_amd64\.deb$")
        templates = {t["ansible.builtin.template"]["dest"]: t["ansible.builtin.template"]
                     for t in tasks if "ansible.builtin.template" in t}
        config = templates["/etc/stormark/agent.yaml"]
        self.assertEqual((config["owner"], config["group"]), ("root", "root"))
        self.assertNotRegex(config["mode"], r"[2367]$|[2367].$", "writable by group or others")
        # The package brings the binary, the unit and the user: nothing is copied by hand.
        copies = [t["ansible.builtin.copy"]["dest"] for t in tasks if "ansible.builtin.copy" in t]
        self.assertFalse([d for d in copies if d.startswith(("/usr/", "/etc/systemd/system/"))
                          and not d.endswith(".deb")], copies)
        with open(os.path.join(DEPLOY, "ansible", "templates", "local.conf.j2")) as f:
            self.assertIn("ExecStart=/usr/bin/stormark-agent ", f.read())

    def test_kubernetes_runs_the_image_the_dockerfile_builds(self):
        import yaml
        text, _ = dockerfile_runtime_stage()
        tag = re.search(r"docker build -f deploy/container/Dockerfile -t (\S+) \.", text).group(1)
        self.assertEqual(tag, f"stormark:{project_version()}")
        images = []
        for path in glob.glob(os.path.join(DEPLOY, "kubernetes", "*.yaml")):
            with open(path) as f:
                for doc in yaml.safe_load_all(f):
                    if doc and doc.get("kind") in ("DaemonSet", "Job"):
                        spec = doc["spec"]["template"]["spec"]
                        images += [c["image"] for c in spec["containers"]]
        self.assertGreaterEqual(len(images), 3, images)
        self.assertEqual(set(images), {tag})

    def test_controller_runs_on_the_hosts_of_an_inventory(self):
        agent = self.start_agent("inv")
        port = agent.address.split(":")[1]
        work = self.make_dir()
        inventory = self.write_file(os.path.join(work, "hosts.ini"), f"""
[web]
not-an-agent.invalid

[stormark_agents]
bench1 ansible_host=127.0.0.1 stormark_port={port} stormark_target=scratch
""")
        result = self.run_stormark(["run", "--inventory", inventory, "--rw", "write",
                                    "--size", "8M", "--no-progress", "--no-db"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        tables = h.phase_tables(result.stdout)
        self.assertEqual(len(h.rows_for(tables[0], "bench1")), 1, result.describe())
        self.assertNotIn("not-an-agent", result.stdout + result.stderr)

    def test_controller_runs_on_every_address_of_a_dns_name(self):
        agent = self.start_agent("dns")
        port = agent.address.split(":")[1]
        result = self.run_stormark(["agents", "--agents-dns", f"localhost:{port}"])
        self.assert_no_crash(result)
        # localhost may also resolve to ::1, where nothing listens: that host is reported.
        self.assertIn(f"127.0.0.1:{port}", result.stdout, result.describe())
        self.assertIn("scratch", result.stdout)


if __name__ == "__main__":
    h.main()
