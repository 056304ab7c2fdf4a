#include "agent/devices/nbd_library.h"

#include "agent/devices/shared_library.h"

namespace stormark::agent {

common::StatusOr<std::shared_ptr<const NbdLibrary>> NbdLibrary::Load() {
  ASSIGN_OR_RETURN(auto library, SharedLibrary::Open("libnbd.so.0", "libnbd0", "nbd:// targets"));
  auto nbd = std::make_shared<NbdLibrary>();
  library->Bind("nbd_create", &nbd->create);
  library->Bind("nbd_close", &nbd->close);
  library->Bind("nbd_get_error", &nbd->get_error);
  library->Bind("nbd_get_errno", &nbd->get_errno);
  library->Bind("nbd_set_pread_initialize", &nbd->set_pread_initialize);
  library->Bind("nbd_set_tls_certificates", &nbd->set_tls_certificates);
  library->Bind("nbd_set_tls_psk_file", &nbd->set_tls_psk_file);
  library->Bind("nbd_set_tls_username", &nbd->set_tls_username);
  library->Bind("nbd_aio_connect_uri", &nbd->aio_connect_uri);
  library->Bind("nbd_aio_is_connecting", &nbd->aio_is_connecting);
  library->Bind("nbd_aio_is_ready", &nbd->aio_is_ready);
  library->Bind("nbd_aio_is_processing", &nbd->aio_is_processing);
  library->Bind("nbd_aio_is_dead", &nbd->aio_is_dead);
  library->Bind("nbd_aio_is_closed", &nbd->aio_is_closed);
  library->Bind("nbd_aio_in_flight", &nbd->aio_in_flight);
  library->Bind("nbd_aio_pread", &nbd->aio_pread);
  library->Bind("nbd_aio_pwrite", &nbd->aio_pwrite);
  library->Bind("nbd_aio_flush", &nbd->aio_flush);
  library->Bind("nbd_poll", &nbd->poll);
  library->Bind("nbd_get_size", &nbd->get_size);
  library->Bind("nbd_get_block_size", &nbd->get_block_size);
  library->Bind("nbd_can_multi_conn", &nbd->can_multi_conn);
  library->Bind("nbd_get_tls_negotiated", &nbd->get_tls_negotiated);
  library->Bind("nbd_is_read_only", &nbd->is_read_only);
  RETURN_IF_ERROR(library->Done());
  return std::shared_ptr<const NbdLibrary>(std::move(nbd));
}

}  // namespace stormark::agent
