// The functions of libnbd the NBD client calls, loaded when an nbd:// target is first opened
// (shared_library.h says why the agent is not linked with it). Each member has the type of the
// libnbd function of the same name without its `nbd_` prefix.
#ifndef STORMARK_AGENT_DEVICES_NBD_LIBRARY_H_
#define STORMARK_AGENT_DEVICES_NBD_LIBRARY_H_

#include <libnbd.h>

#include <memory>

#include "common/status.h"

namespace stormark::agent {

struct NbdLibrary {
  // Loads libnbd.so.0 and binds every function below; fails with one line naming the library
  // and its Debian package (libnbd0) when the host has none, or the first function it lacks.
  static common::StatusOr<std::shared_ptr<const NbdLibrary>> Load();

  decltype(&::nbd_create) create = nullptr;
  decltype(&::nbd_close) close = nullptr;
  decltype(&::nbd_get_error) get_error = nullptr;
  decltype(&::nbd_get_errno) get_errno = nullptr;
  decltype(&::nbd_set_pread_initialize) set_pread_initialize = nullptr;
  decltype(&::nbd_set_tls_certificates) set_tls_certificates = nullptr;
  decltype(&::nbd_set_tls_psk_file) set_tls_psk_file = nullptr;
  decltype(&::nbd_set_tls_username) set_tls_username = nullptr;
  decltype(&::nbd_aio_connect_uri) aio_connect_uri = nullptr;
  decltype(&::nbd_aio_is_connecting) aio_is_connecting = nullptr;
  decltype(&::nbd_aio_is_ready) aio_is_ready = nullptr;
  decltype(&::nbd_aio_is_processing) aio_is_processing = nullptr;
  decltype(&::nbd_aio_is_dead) aio_is_dead = nullptr;
  decltype(&::nbd_aio_is_closed) aio_is_closed = nullptr;
  decltype(&::nbd_aio_in_flight) aio_in_flight = nullptr;
  decltype(&::nbd_aio_pread) aio_pread = nullptr;
  decltype(&::nbd_aio_pwrite) aio_pwrite = nullptr;
  decltype(&::nbd_aio_flush) aio_flush = nullptr;
  decltype(&::nbd_poll) poll = nullptr;
  decltype(&::nbd_get_size) get_size = nullptr;
  decltype(&::nbd_get_block_size) get_block_size = nullptr;
  decltype(&::nbd_can_multi_conn) can_multi_conn = nullptr;
  decltype(&::nbd_get_tls_negotiated) get_tls_negotiated = nullptr;
  decltype(&::nbd_is_read_only) is_read_only = nullptr;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_NBD_LIBRARY_H_
