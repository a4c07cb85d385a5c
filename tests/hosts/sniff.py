"""Counts, on the network device DEVICE of the namespace it runs in, the frames and those whose
bytes hold MARKER, until its standard input closes; then prints `{"frames": n, "marked": m}`.
`python3 sniff.py DEVICE MARKER`, in the switch's namespace: what crosses a host's cable in clear.
"""

import json
import select
import socket
import sys

ETH_P_ALL = 0x0003


def main(device: str, marker: bytes) -> None:
    sniffer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sniffer.bind((device, 0))
    sniffer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
    sniffer.setblocking(False)
    print("ready", flush=True)
    frames = marked = 0
    while True:
        readable, _, _ = select.select([sniffer, sys.stdin], [], [])
        if sys.stdin in readable and not sys.stdin.buffer.read1(1):
            break
        while True:
            try:
                frame = sniffer.recv(1 << 17)
            except BlockingIOError:
                break
            frames += 1
            marked += marker in frame
    print(json.dumps({"frames": frames, "marked": marked}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].encode())
