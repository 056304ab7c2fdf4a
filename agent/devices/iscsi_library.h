// The functions of libiscsi the iSCSI initiator calls, loaded when an iscsi:// target is first
// opened (shared_library.h says why the agent is not linked with it). Each member has the type
// of the libiscsi function of the same name without its `iscsi_` prefix; the two from
// scsi-lowlevel.h keep their `scsi_` prefix.
#ifndef STORMARK_AGENT_DEVICES_ISCSI_LIBRARY_H_
#define STORMARK_AGENT_DEVICES_ISCSI_LIBRARY_H_

// clang-format off
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
// clang-format on

#include <memory>

#include "common/status.h"

namespace stormark::agent {

struct IscsiLibrary {
  // Loads libiscsi.so.7 and binds every function below; fails with one line naming the library
  // and its Debian package (libiscsi7) when the host has none, or the first function it lacks.
  static common::StatusOr<std::shared_ptr<const IscsiLibrary>> Load();

  decltype(&::iscsi_create_context) create_context = nullptr;
  decltype(&::iscsi_destroy_context) destroy_context = nullptr;
  decltype(&::iscsi_get_error) get_error = nullptr;
  decltype(&::iscsi_set_targetname) set_targetname = nullptr;
  decltype(&::iscsi_set_session_type) set_session_type = nullptr;
  decltype(&::iscsi_set_header_digest) set_header_digest = nullptr;
  decltype(&::iscsi_set_noautoreconnect) set_noautoreconnect = nullptr;
  decltype(&::iscsi_set_initiator_username_pwd) set_initiator_username_pwd = nullptr;
  decltype(&::iscsi_full_connect_async) full_connect_async = nullptr;
  decltype(&::iscsi_is_logged_in) is_logged_in = nullptr;
  decltype(&::iscsi_get_fd) get_fd = nullptr;
  decltype(&::iscsi_which_events) which_events = nullptr;
  decltype(&::iscsi_service) service = nullptr;
  decltype(&::iscsi_readcapacity16_task) readcapacity16_task = nullptr;
  decltype(&::iscsi_read16_iov_task) read16_iov_task = nullptr;
  decltype(&::iscsi_write16_iov_task) write16_iov_task = nullptr;
  decltype(&::iscsi_synchronizecache16_task) synchronizecache16_task = nullptr;
  decltype(&::scsi_datain_unmarshall) scsi_datain_unmarshall = nullptr;
  decltype(&::scsi_free_scsi_task) scsi_free_scsi_task = nullptr;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_ISCSI_LIBRARY_H_
