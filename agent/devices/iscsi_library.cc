#include "agent/devices/iscsi_library.h"

#include "agent/devices/shared_library.h"

namespace stormark::agent {

common::StatusOr<std::shared_ptr<const IscsiLibrary>> IscsiLibrary::Load() {
  ASSIGN_OR_RETURN(auto library,
                   SharedLibrary::Open("libiscsi.so.7", "libiscsi7", "iscsi:// targets"));
  auto iscsi = std::make_shared<IscsiLibrary>();
  library->Bind("iscsi_create_context", &iscsi->create_context);
  library->Bind("iscsi_destroy_context", &iscsi->destroy_context);
  library->Bind("iscsi_get_error", &iscsi->get_error);
  library->Bind("iscsi_set_targetname", &iscsi->set_targetname);
  library->Bind("iscsi_set_session_type", &iscsi->set_session_type);
  library->Bind("iscsi_set_header_digest", &iscsi->set_header_digest);
  library->Bind("iscsi_set_noautoreconnect", &iscsi->set_noautoreconnect);
  library->Bind("iscsi_set_initiator_username_pwd", &iscsi->set_initiator_username_pwd);
  library->Bind("iscsi_full_connect_async", &iscsi->full_connect_async);
  library->Bind("iscsi_is_logged_in", &iscsi->is_logged_in);
  library->Bind("iscsi_get_fd", &iscsi->get_fd);
  library->Bind("iscsi_which_events", &iscsi->which_events);
  library->Bind("iscsi_service", &iscsi->service);
  library->Bind("iscsi_readcapacity16_task", &iscsi->readcapacity16_task);
  library->Bind("iscsi_read16_iov_task", &iscsi->read16_iov_task);
  library->Bind("iscsi_write16_iov_task", &iscsi->write16_iov_task);
  library->Bind("iscsi_synchronizecache16_task", &iscsi->synchronizecache16_task);
  library->Bind("scsi_datain_unmarshall", &iscsi->scsi_datain_unmarshall);
  library->Bind("scsi_free_scsi_task", &iscsi->scsi_free_scsi_task);
  RETURN_IF_ERROR(library->Done());
  return std::shared_ptr<const IscsiLibrary>(std::move(iscsi));
}

}  // namespace stormark::agent
