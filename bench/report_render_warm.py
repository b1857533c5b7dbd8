#!/usr/bin/python3
"""How long report pages take to draw in a running browser: each page loaded N times, in turn, in one headless
Chromium driven through its DevTools protocol on a pipe (stdlib only). The time is from navigation start to the end
of the first layout (a script appended to a copy forces layout, then reads performance.now()); a cold start of the
browser is bench/report_render.sh.
Usage: bench/report_render_warm.py N PAGE.html...   (pages from SATURATE_REPORT_PAGES=DIR build/report_bench)"""
import json, os, shutil, subprocess, sys, tempfile

def main():
    n = int(sys.argv[1]); pages = sys.argv[2:]
    tmp = tempfile.mkdtemp()
    copies = []
    for p in pages:
        s = open(p, encoding='utf-8').read()
        s = s.replace('</body>', '<script>document.documentElement.scrollWidth; window.__drawn = performance.now();</script></body>')
        c = os.path.join(tmp, os.path.basename(os.path.dirname(p)) + '-' + os.path.basename(p))
        open(c, 'w', encoding='utf-8').write(s)
        copies.append(c)
    r_child, w_parent = os.pipe(); r_parent, w_child = os.pipe()
    os.set_inheritable(r_child, True); os.set_inheritable(w_child, True)
    proc = subprocess.Popen(['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--window-size=1200,900',
                             '--remote-debugging-pipe', '--user-data-dir=' + tmp + '/profile', 'about:blank'],
                            pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: (os.dup2(r_child, 3), os.dup2(w_child, 4)))
    os.close(r_child); os.close(w_child)
    out = os.fdopen(w_parent, 'wb', buffering=0); inp = os.fdopen(r_parent, 'rb', buffering=0)
    buf = b''; mid = [0]
    def send(method, params=None, session=None):
        mid[0] += 1
        msg = {'id': mid[0], 'method': method, 'params': params or {}}
        if session: msg['sessionId'] = session
        out.write(json.dumps(msg).encode() + b'\0')
        return mid[0]
    def wait(want_id=None, event=None):
        nonlocal buf
        while True:
            while b'\0' not in buf:
                chunk = inp.read(65536)
                if not chunk: raise SystemExit('chromium closed the pipe')
                buf += chunk
            raw, buf = buf.split(b'\0', 1)
            m = json.loads(raw)
            if want_id is not None and m.get('id') == want_id: return m
            if event is not None and m.get('method') == event: return m
    t = wait(send('Target.createTarget', {'url': 'about:blank'}))['result']['targetId']
    s = wait(send('Target.attachToTarget', {'targetId': t, 'flatten': True}))['result']['sessionId']
    wait(send('Page.enable', session=s))
    times = {c: [] for c in copies}
    for i in range(n):
        for c in copies:
            send('Page.navigate', {'url': 'file://' + c}, session=s)
            wait(event='Page.loadEventFired')
            r = wait(send('Runtime.evaluate', {'expression': 'window.__drawn', 'returnByValue': True}, session=s))
            times[c].append(r['result']['result'].get('value'))
    proc.kill()
    proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)
    for p, c in zip(pages, copies):
        v = sorted(x for x in times[c] if x is not None)
        print(f"{p}: median {v[len(v)//2]:.0f} ms, max {v[-1]:.0f} ms ({' '.join('%.0f' % x for x in v)})")

main()
