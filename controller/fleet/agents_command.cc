#include "controller/fleet/agents_command.h"

#include <map>
#include <memory>

#include "common/clock.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/version.h"
#include "controller/fleet/agent_client.h"
#include "controller/fleet/fleet.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

// "local (virtio)", "AoE (etherd e1.0 via eth1)", or "-".
std::string Transport(const stormark::v1::TargetInfo& t) {
  if (t.transport().empty()) return "-";
  return t.transport_detail().empty() ? t.transport()
                                      : fmt::format("{} ({})", t.transport(), t.transport_detail());
}

}  // namespace

int AgentsCommand(const std::vector<HostPlan>& hosts, const common::TlsFiles& tls_files,
                  std::FILE* out, std::FILE* err) {
  const common::Clock& clock = common::SystemClock();
  auto tls = LoadControllerTls(tls_files, {});
  if (!tls.ok()) {
    std::fprintf(err, "stormark: %s\n", std::string(tls.status().message()).c_str());
    return 2;
  }
  if (tls->has_value() && !(*tls)->warning.empty()) {
    std::fprintf(err, "stormark: warning: %s\n", (*tls)->warning.c_str());
  }
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (const HostPlan& host : hosts) {
    auto client = AgentClient::ForAddress(host.address, clock, host.name,
                                          {tls->has_value() ? &**tls : nullptr, host.tls_name});
    if (!client.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(client.status().message()).c_str());
      return 2;
    }
    clients.push_back(std::move(*client));
  }
  Fleet fleet(std::move(clients), clock);
  const auto statuses = fleet.ConnectAll();
  int code = 0;
  for (size_t i = 0; i < fleet.size(); ++i) {
    const AgentClient& c = fleet.client(i);
    if (!statuses[i].ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(statuses[i].message()).c_str());
      code = 1;
      continue;
    }
    const auto& info = c.info();
    std::fprintf(out, "%s\n", c.host().c_str());
    TextTable facts;
    facts.AddColumn("fact", TextTable::Align::kLeft);
    facts.AddColumn("value", TextTable::Align::kLeft);
    facts.AddRow({"hostname", info.hostname()});
    facts.AddRow({"agent", common::StrCat(info.agent_version(), " (protocol ",
                                          common::FormatVersion(info.protocol()), ")")});
    facts.AddRow({"kernel", info.kernel()});
    facts.AddRow({"cpu", fmt::format("{} x {}", info.cpu_count(), info.cpu_model())});
    facts.AddRow({"ram", common::FormatBytes(info.ram_bytes())});
    // The rest of the environment (cpu_governor, vm.dirty_*), under its stable keys.
    for (const auto& [key, value] :
         std::map<std::string, std::string>(info.environment().begin(), info.environment().end())) {
      if (key == "cpu_governor" || key.starts_with("vm.")) facts.AddRow({key, value});
    }
    facts.AddRow({"clock offset", fmt::format("{:+.3f} ms (round trip {:.3f} ms)",
                                              static_cast<double>(c.clock().offset_nanos) / 1e6,
                                              static_cast<double>(c.clock().rtt_nanos) / 1e6)});
    facts.AddRow({"busy with", info.busy_with_phase().empty() ? "-" : info.busy_with_phase()});
    std::fputs(facts.Render("  ").c_str(), out);
    TextTable targets;
    targets.AddColumn("target", TextTable::Align::kLeft);
    targets.AddColumn("kind", TextTable::Align::kLeft);
    targets.AddColumn("path", TextTable::Align::kLeft);
    targets.AddColumn("fs", TextTable::Align::kLeft);
    targets.AddColumn("device", TextTable::Align::kLeft);
    targets.AddColumn("free", TextTable::Align::kRight);
    targets.AddColumn("size", TextTable::Align::kRight);
    targets.AddColumn("mount options", TextTable::Align::kLeft);
    targets.AddColumn("transport", TextTable::Align::kLeft);
    for (const auto& t : info.targets()) {
      // A target of files reports its filesystem and its space, and no size; a device used in
      // place, its size (0 for a network target not reached yet, which has no filesystem).
      if (t.size_bytes() == 0 && !t.filesystem().empty()) {
        targets.AddRow({t.name(), t.kind(), t.path(), t.filesystem(), t.device(),
                        common::FormatBytes(t.free_bytes()), common::FormatBytes(t.total_bytes()),
                        t.mount_options(), Transport(t)});
        continue;
      }
      // Block, network and null targets are used in place: their size is what workloads
      // address.
      const std::string kind =
          common::StrCat(t.kind(), t.block_kind().empty() ? "" : " ", t.block_kind(),
                         t.disposable() ? ", disposable" : ", read-only");
      targets.AddRow({t.name(), kind, t.path(), t.filesystem(), t.device(), "-",
                      common::FormatBytes(t.size_bytes()), t.mount_options(), Transport(t)});
    }
    std::fputs("\n", out);
    std::fputs(targets.Render("  ").c_str(), out);
    std::fputs("\n", out);
  }
  return code;
}

}  // namespace stormark::controller
