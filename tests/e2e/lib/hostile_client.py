"""Hostile clients against an exporter on 127.0.0.1, while a scraper keeps scraping; bounded in count and time.

usage: hostile_client.py PORT SECONDS [--idle N] [--slow N] [--large N] [--no-scrape]

Prints one line per kind of client and the scraper's figures; exits 1 when a scrape failed or took over 2 s.
  --slow N   connections sending a request's headers one byte a second (slowloris)
  --idle N   connections that connect and send nothing, reopened when closed (at most 4 N opens in all)
  --large N  connections each sending up to 2 MiB of headers (at most N of them, one after another)
"""
import argparse
import socket
import threading
import time

HOST = "127.0.0.1"
SCRAPE_BUDGET_S = 2.0


def connect(port, timeout=2.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect((HOST, port))
    return s


def scraper(port, end, figures):
    while time.monotonic() < end:
        start = time.monotonic()
        ok = False
        try:
            with connect(port, SCRAPE_BUDGET_S) as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                ok = data.startswith(b"HTTP/1.1 200") and b"saturate_host_" in data
        except OSError:
            ok = False
        took = time.monotonic() - start
        figures["latencies"].append(took)
        if not ok or took > SCRAPE_BUDGET_S:
            figures["failed"] += 1
        time.sleep(0.2)


def slow(port, count, end, figures):
    conns = []
    for _ in range(count):
        try:
            s = connect(port)
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            conns.append(s)
        except OSError:
            pass
    while conns and time.monotonic() < end:
        for s in list(conns):
            try:
                s.send(b"X")
            except OSError:
                figures["slow_closed"] += 1
                conns.remove(s)
                s.close()
        time.sleep(1.0)
    for s in conns:
        s.close()


def idle(port, count, end, figures):
    conns = []
    opens = 0
    while time.monotonic() < end and opens < 4 * count:
        # Keep `count` open: reopen those the server closed.
        for s in list(conns):
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    conns.remove(s)
                    s.close()
                    figures["idle_closed"] += 1
            except BlockingIOError:
                pass
            except OSError:
                conns.remove(s)
                s.close()
                figures["idle_closed"] += 1
        while len(conns) < count and opens < 4 * count:
            try:
                conns.append(connect(port))
            except OSError:
                figures["idle_refused"] += 1
            opens += 1
        time.sleep(0.5)
    figures["idle_opens"] = opens
    for s in conns:
        s.close()


def large(port, count, end, figures):
    line = b"X-Large: " + b"a" * 4000 + b"\r\n"
    for _ in range(count):
        if time.monotonic() >= end:
            break
        sent = 0
        try:
            with connect(port) as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\n")
                while sent < (2 << 20):
                    s.sendall(line)
                    sent += len(line)
        except OSError:
            figures["large_cut"] += 1
        figures["large_bytes"] += sent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--idle", type=int, default=0)
    parser.add_argument("--slow", type=int, default=0)
    parser.add_argument("--large", type=int, default=0)
    parser.add_argument("--no-scrape", action="store_true")
    args = parser.parse_args()
    end = time.monotonic() + min(args.seconds, 120)
    figures = {"latencies": [], "failed": 0, "slow_closed": 0, "idle_closed": 0, "idle_refused": 0,
               "idle_opens": 0, "large_cut": 0, "large_bytes": 0}
    threads = [threading.Thread(target=slow, args=(args.port, min(args.slow, 100), end, figures)),
               threading.Thread(target=idle, args=(args.port, min(args.idle, 500), end, figures)),
               threading.Thread(target=large, args=(args.port, min(args.large, 200), end, figures))]
    if not args.no_scrape:
        threads.append(threading.Thread(target=scraper, args=(args.port, end, figures)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat = sorted(figures["latencies"])
    print(f"slow: {args.slow} connections, {figures['slow_closed']} closed by the server")
    print(f"idle: {figures['idle_opens']} opened, {figures['idle_closed']} closed by the server, "
          f"{figures['idle_refused']} refused")
    print(f"large: {figures['large_bytes'] / 2**20:.1f} MiB of headers sent, {figures['large_cut']} connections cut")
    if args.no_scrape:
        return 0
    if not lat:
        print("scrapes: none")
        return 1
    print(f"scrapes: {len(lat)}, failed or over {SCRAPE_BUDGET_S} s: {figures['failed']}, "
          f"median {lat[len(lat) // 2] * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms")
    return 1 if figures["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
