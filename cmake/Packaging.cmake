# Installation layout and the two Debian packages (`make deb`, i.e. cpack -G DEB):
#   stormark-agent  the agent, its systemd unit, /etc/stormark/agent.yaml (no target: the
#                   agent allows nothing until the admin names one), the stormark system
#                   user and group (postinst), and its man page
#   stormark        the controller and its man page
# Library dependencies come from dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS), never from
# a hand-written list. The man pages are written by help2man from --help and --version
# (target stormark-man; `make deb` builds it).

include(GNUInstallDirs)
# `make deb` builds what the packages hold; installing must not build the tests as well.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(debian_dir ${PROJECT_SOURCE_DIR}/deploy/debian)
set(package_dir ${CMAKE_BINARY_DIR}/package)

install(TARGETS stormark RUNTIME DESTINATION bin COMPONENT controller)
install(TARGETS stormark-agent RUNTIME DESTINATION bin COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/stormark-agent.service
        DESTINATION /lib/systemd/system COMPONENT agent)
install(FILES ${debian_dir}/agent.yaml DESTINATION /etc/stormark COMPONENT agent
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# Per package: copyright, changelog (compressed as Debian wants), the README and the manual (docs/).
configure_file(${debian_dir}/changelog.in ${package_dir}/changelog @ONLY)
find_program(GZIP_PROGRAM gzip REQUIRED)
find_program(HELP2MAN_PROGRAM help2man)
set(man_pages)
if(HELP2MAN_PROGRAM)
  foreach(program stormark stormark-agent)
    add_custom_command(
      OUTPUT ${package_dir}/${program}.1.gz
      COMMAND ${HELP2MAN_PROGRAM} --no-info --section 1 --version-string ${PROJECT_VERSION}
              --include ${debian_dir}/${program}.h2m
              --output ${package_dir}/${program}.1 $<TARGET_FILE:${program}>
      COMMAND ${GZIP_PROGRAM} -9nf ${package_dir}/${program}.1
      DEPENDS ${program} ${debian_dir}/${program}.h2m
      COMMENT "Writing the man page of ${program}"
      VERBATIM)
    list(APPEND man_pages ${package_dir}/${program}.1.gz)
  endforeach()
endif()
add_custom_command(
  OUTPUT ${package_dir}/changelog.gz
  COMMAND ${GZIP_PROGRAM} -9nkf ${package_dir}/changelog
  DEPENDS ${package_dir}/changelog
  VERBATIM)
add_custom_target(stormark-man DEPENDS ${man_pages} ${package_dir}/changelog.gz)
if(NOT HELP2MAN_PROGRAM)
  add_custom_command(TARGET stormark-man POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E echo "help2man is missing: scripts/install-deps.sh build"
    COMMAND ${CMAKE_COMMAND} -E false)
endif()

foreach(component agent controller)
  if(component STREQUAL agent)
    set(package stormark-agent)
  else()
    set(package stormark)
  endif()
  install(FILES ${package_dir}/${package}.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT ${component})
  install(FILES ${debian_dir}/copyright ${package_dir}/changelog.gz ${PROJECT_SOURCE_DIR}/README.md
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package}
          COMPONENT ${component})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME stormark)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "stormark maintainers <maintainers@stormark.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent controller)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME stormark-agent)
# adduser: the postinst creates the system user (not a library: dpkg-shlibdeps cannot see it).
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS adduser)
# The agent loads libnbd and libiscsi only when an nbd:// or iscsi:// target is opened
# (agent/devices/shared_library.h), so dpkg-shlibdeps cannot see them: apt installs them by
# default, and a host that reaches no such export may go without them and GnuTLS.
set(CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS "libnbd0 (>= 1.14), libiscsi7 (>= 1.19)")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    ${debian_dir}/postinst ${debian_dir}/prerm ${debian_dir}/postrm ${debian_dir}/conffiles)
set(CPACK_DEBIAN_AGENT_DESCRIPTION "storage benchmark agent for stormark controllers
stormark-agent runs on every storage host of a stormark benchmark. It serves
the controller's protocol on a unix socket (or on TCP with mutual TLS) and
runs the phases it is sent (stream, randio, bonnie, postmark and command
workloads) on the targets its configuration allows: directories, block
devices, and NBD, iSCSI and AoE exports reached from user space.
.
The installed configuration names no target, so the agent allows nothing and
the service is not enabled until the administrator names one.")

set(CPACK_DEBIAN_CONTROLLER_PACKAGE_NAME stormark)
# The agent is only needed on this host for `stormark run` without --agent.
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_SUGGESTS stormark-agent)
set(CPACK_DEBIAN_CONTROLLER_DESCRIPTION "distributed storage benchmark controller
stormark runs the same storage workload on many hosts at one instant, gathers
their timings and prints the side-by-side comparison people otherwise build by
hand from dd, bonnie++ and shell loops. It records every run in a results
history, compares runs, gates CI on regressions and writes HTML reports.")

include(CPack)
