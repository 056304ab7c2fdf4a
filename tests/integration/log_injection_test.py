"""Text a caller sends cannot forge, cut or flood a real agent's log. The controller refuses
such names itself, so the requests are sent by hand: a minimal gRPC client over plain-text
HTTP/2 (standard library only), with the protobuf messages encoded here."""

import os
import re
import socket
import struct
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402



def _protocol():
    """The protocol this tree speaks, read from its sources, so the test never goes stale."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with open(os.path.join(root, "proto", "stormark", "v1", "agent.proto")) as f:
        major = int(re.search(r"PROTOCOL_MAJOR\s*=\s*(\d+)", f.read()).group(1))
    with open(os.path.join(root, "common", "version.h")) as f:
        minor = int(re.search(r"kProtocolMinor\s*=\s*(\d+)", f.read()).group(1))
    return major, minor


PROTOCOL_MAJOR, PROTOCOL_MINOR = _protocol()


# Protobuf wire format: just what these requests need.
def _varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, value):
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def prepare_request(phase_id, target):
    version = _field(1, PROTOCOL_MAJOR) + _field(2, PROTOCOL_MINOR)
    stream = _field(1, 1) + _field(2, 1 << 20) + _field(3, 65536)  # A small write.
    spec = _field(1, phase_id) + _field(2, target) + _field(10, stream)
    return _field(1, version) + _field(2, spec)


def phase_id_request(phase_id):  # RunRequest, AbortRequest, CleanupRequest, HeartbeatRequest
    return _field(1, phase_id)


# HTTP/2 (RFC 9113) and HPACK (RFC 7541), literal headers only.
_DATA, _HEADERS, _RST_STREAM, _SETTINGS, _PING, _GOAWAY, _WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
_END_STREAM, _ACK, _END_HEADERS = 0x1, 0x1, 0x4


def _hpack_int(n):
    if n < 127:
        return bytes([n])
    out, n = bytearray([127]), n - 127
    while n >= 128:
        out.append(n % 128 + 128)
        n //= 128
    return bytes(out + bytearray([n]))


def _header_block(headers):
    out = b""
    for name, value in headers:
        out += b"\x00" + _hpack_int(len(name)) + name + _hpack_int(len(value)) + value
    return out


class GrpcCall:
    """One unary or server-streaming call on a fresh connection; returns when the server ends
    the stream (its trailers, a reset or the connection's end)."""

    def __init__(self, address, method, message, timeout=20):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.buffer = b""
        self.conn_window = 65535
        self.stream_window = 65535
        self.ended = False
        try:
            self.sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + self._frame(_SETTINGS, 0, 0, b""))
            headers = [(b":method", b"POST"), (b":scheme", b"http"),
                       (b":path", b"/stormark.v1.Agent/" + method.encode()),
                       (b":authority", address.encode()), (b"content-type", b"application/grpc"),
                       (b"te", b"trailers")]
            self.sock.sendall(self._frame(_HEADERS, _END_HEADERS, 1, _header_block(headers)))
            body = b"\x00" + struct.pack(">I", len(message)) + message
            while body and not self.ended:
                room = min(self.conn_window, self.stream_window, 16384)
                if room <= 0:
                    self._read_frame()
                    continue
                chunk, body = body[:room], body[room:]
                self.conn_window -= len(chunk)
                self.stream_window -= len(chunk)
                self.sock.sendall(self._frame(_DATA, 0 if body else _END_STREAM, 1, chunk))
            while not self.ended:
                self._read_frame()
        finally:
            self.sock.close()

    @staticmethod
    def _frame(kind, flags, stream, payload):
        return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + \
            struct.pack(">I", stream) + payload

    def _recv(self, n):
        while len(self.buffer) < n:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the agent closed the connection")
            self.buffer += data
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _read_frame(self):
        try:
            head = self._recv(9)
        except ConnectionError:
            self.ended = True
            return
        length = int.from_bytes(head[:3], "big")
        kind, flags = head[3], head[4]
        stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
        payload = self._recv(length)
        if kind == _SETTINGS and not flags & _ACK:
            for i in range(0, len(payload), 6):
                key, value = struct.unpack(">HI", payload[i:i + 6])
                if key == 0x4:  # SETTINGS_INITIAL_WINDOW_SIZE
                    self.stream_window += value - 65535
            self.sock.sendall(self._frame(_SETTINGS, _ACK, 0, b""))
        elif kind == _PING and not flags & _ACK:
            self.sock.sendall(self._frame(_PING, _ACK, 0, payload))
        elif kind == _WINDOW_UPDATE:
            increment = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
            if stream == 0:
                self.conn_window += increment
            else:
                self.stream_window += increment
        elif stream == 1 and (kind == _RST_STREAM or (kind == _HEADERS and flags & _END_STREAM)):
            self.ended = True
        elif kind == _GOAWAY:
            self.ended = True


FORGED = "stormark-agent: prepared phase 'nightly' on target 'prod' [peer ipv4:10.0.0.1:1 CN=admin]"

HOSTILE = [
    ("newline", f"x' on target 'scratch' [peer ipv4:127.0.0.1:1]\n{FORGED}".encode()),
    ("nul", b"p1\x00 [peer hidden]"),
    ("escape", b"\x1b[2J\x1b[H\r"),
    # Under the agent's 1 MiB request limit, with room for the rest of the message.
    ("huge", b"a" * ((1 << 20) - 4096)),
]


class LogInjectionTest(h.StormarkTestCase):

    def lines(self, agent):
        with open(agent.log_path, "rb") as f:
            return f.read().split(b"\n")[:-1]

    def call(self, agent, method, message):
        before = self.lines(agent)
        GrpcCall(agent.address, method, message)
        return before

    def assert_grew(self, agent, before, count, what):
        after = self.lines(agent)
        self.assertEqual(after[:len(before)], before, what)
        added = after[len(before):]
        self.assertEqual(len(added), count, f"{what}: {added!r}"[:2000])
        for line in added:
            self.assertTrue(line.startswith(b"stormark-agent: "), f"{what}: {line!r}"[:2000])
            self.assertFalse(line.startswith(b"stormark-agent: prepared"), f"{what}: {line!r}")
            self.assertLess(len(line), 600, f"{what}: {line[:700]!r}")
            self.assertNotIn(b"\x00", line)
            self.assertNotIn(b"\x1b", line)
            self.assertNotIn(b"\r", line)
            self.assertIn(b" [peer ipv4:127.0.0.1:", line, what)
            line.decode("utf-8")  # Valid UTF-8, whatever was sent.
        return added

    def test_hostile_names_add_one_escaped_line_per_call(self):
        agent = self.start_agent()
        start_size = os.path.getsize(agent.log_path)
        calls = 0
        for label, value in HOSTILE:
            before = self.call(agent, "Prepare", prepare_request(value, b"scratch"))
            added = self.assert_grew(agent, before, 1, f"Prepare phase id {label}")
            self.assertIn(b"refused prepare of phase '", added[0])
            before = self.call(agent, "Prepare", prepare_request(b"p1", value))
            added = self.assert_grew(agent, before, 1, f"Prepare target {label}")
            self.assertIn(b"is not configured on this agent", added[0])
            for method in ("Run", "Abort", "Cleanup"):
                before = self.call(agent, method, phase_id_request(value))
                added = self.assert_grew(agent, before, 1, f"{method} {label}")
                self.assertIn(f"refused {method.lower()}: phase id '".encode(), added[0])
            before = self.call(agent, "Heartbeat", phase_id_request(value))
            self.assert_grew(agent, before, 0, f"Heartbeat {label}")
            calls += 5
        log = self.lines(agent)
        self.assertIn(b"\\x0astormark-agent: prepared phase \\x27nightly\\x27", b"\n".join(log))
        self.assertIn(b"\\x1b[2J\\x1b[H\\x0d", b"\n".join(log))
        self.assertIn(b"p1\\x00 [peer hidden]", b"\n".join(log))
        self.assertIn(b"\xe2\x80\xa6(+", b"\n".join(log))  # The huge name is cut short.
        # Each call added under 600 bytes, the mebibyte names included.
        self.assertLess(os.path.getsize(agent.log_path) - start_size, calls * 600)
        self.assertEqual(agent.proc.poll(), None, "the agent is still serving")
        self.assertEqual(os.listdir(agent.target_dir), [])

    def test_invalid_utf8_is_refused_before_the_service(self):
        # proto3 refuses a string field that is not UTF-8 while parsing; libprotobuf says so
        # on stderr in a fixed line that does not hold the value, and the service logs nothing.
        agent = self.start_agent()
        before = self.call(agent, "Prepare", prepare_request(b"a\xff\xc3\n" + FORGED.encode(),
                                                             b"scratch"))
        added = self.lines(agent)[len(before):]
        for line in added:
            self.assertNotIn(b"stormark-agent: ", line)
            self.assertNotIn(b"nightly", line)
            self.assertIn(b"contains invalid UTF-8 data", line)
        self.assertEqual(agent.proc.poll(), None, "the agent is still serving")


if __name__ == "__main__":
    h.main()
