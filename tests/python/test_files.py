"""The data-file watch (python/saturate/_files.py, the `files` message of docs/helper-protocol.md): each case runs a
child /usr/bin/python3 with saturate's helper folder on PYTHONPATH and a real bound datagram socket, as probe starts
a run, and reads what it reported.

Run: /usr/bin/python3 -m unittest discover -s tests/python   (the DataLoader case skips without torch)
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from test_auto import ChannelTest
from test_saturate import of_type, saturate_env

HAVE_TORCH = importlib.util.find_spec("torch") is not None


class FileWatchTest(ChannelTest):
    def setUp(self):
        super().setUp()
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        self.data = os.path.join(self.tmp, "data")
        os.makedirs(self.data)

    def tearDown(self):
        self._tmp.cleanup()
        super().tearDown()

    def make_files(self, n, folder=None):
        folder = folder or self.data
        paths = []
        for i in range(n):
            path = os.path.join(folder, "s%05d.bin" % i)
            with open(path, "wb") as f:
                f.write(b"x" * 100)
            paths.append(path)
        return paths

    def run_script(self, body, *args, extra_path=None, **env):
        script = os.path.join(self.tmp, "train.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(body))
        environment = saturate_env(self.receiver, **env)
        if extra_path:
            environment["PYTHONPATH"] += os.pathsep + extra_path
        proc = subprocess.run([sys.executable, script, *args], env=environment, capture_output=True, text=True,
                              timeout=120, cwd=self.tmp)
        return proc, of_type(self.receiver.drain(), "files"), script

    @staticmethod
    def paths_of(messages):
        return [p for m in messages for p in m["paths"]]

    def test_names_the_files_read_and_not_the_script_code_or_writes(self):
        paths = self.make_files(5)
        proc, files, script = self.run_script("""
            import json, os, sys
            for name in sorted(os.listdir(sys.argv[1])):
                with open(os.path.join(sys.argv[1], name), "rb") as f:
                    f.read()
            with open("log.txt", "w") as log:           # a write: not data
                log.write("done")
            fd = os.open(os.path.join(sys.argv[1], "s00000.bin"), os.O_RDONLY)   # os.open counts too
            os.close(fd)
            print("ok")
            """, self.data)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        seen = self.paths_of(files)
        self.assertEqual(sorted(set(seen)), paths)
        self.assertEqual(len(seen), len(set(seen)), "a path was sent twice")
        # Where the run writes is reported apart.
        self.assertEqual([p for m in files for p in m.get("writes", [])], [os.path.join(self.tmp, "log.txt")])
        self.assertNotIn(script, seen)
        self.assertFalse(any(p.endswith((".py", ".pyc", ".so", "log.txt")) for p in seen), seen)
        # Six reads of data files; the last message carries the final count.
        self.assertEqual(files[-1]["opens"], 6)
        self.assertNotIn("saturate:", proc.stderr)

    def test_many_files_are_sampled_first_ones_then_a_reservoir(self):
        paths = self.make_files(400)
        proc, files, _ = self.run_script("""
            import os, sys
            for _ in range(2):
                for name in sorted(os.listdir(sys.argv[1])):
                    with open(os.path.join(sys.argv[1], name), "rb") as f:
                        f.read()
            """, self.data)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        seen = self.paths_of(files)
        self.assertEqual(seen[:32], paths[:32])
        self.assertLessEqual(len(set(seen)), 64)
        self.assertGreater(len(set(seen)), 40)  # the reservoir holds later files too
        self.assertTrue(any(p in paths[200:] for p in seen), "no file of the later half was sampled")
        self.assertEqual(files[-1]["opens"], 800)

    def test_a_path_that_is_not_utf8_is_left_out_and_its_open_still_works(self):
        self.make_files(1)
        proc, files, _ = self.run_script("""
            import os, sys
            odd = os.path.join(os.fsencode(sys.argv[1]), b"\\xff.bin")
            with open(odd, "wb") as f:
                f.write(b"odd")
            with open(odd, "rb") as f:
                assert f.read() == b"odd"
            with open(os.path.join(sys.argv[1], "s00000.bin"), "rb") as f:
                f.read()
            print("ok")
            """, self.data)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("ok", proc.stdout)
        self.assertEqual(self.paths_of(files), [os.path.join(self.data, "s00000.bin")])

    def test_processes_started_by_spawn_report_their_own_files(self):
        paths = self.make_files(4)
        proc, files, _ = self.run_script("""
            import multiprocessing, os, sys

            def read(path):
                with open(path, "rb") as f:
                    return len(f.read())

            if __name__ == "__main__":
                folder = sys.argv[1]
                names = [os.path.join(folder, n) for n in sorted(os.listdir(folder))]
                with multiprocessing.get_context("spawn").Pool(2) as pool:
                    print(sum(pool.map(read, names)))
                print("parent", os.getpid())
            """, self.data)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        parent = int(proc.stdout.split("parent")[1])
        self.assertEqual(sorted(set(self.paths_of(files))), paths)
        self.assertTrue(all(m["pid"] != parent for m in files), "the children's opens came from the parent")

    @unittest.skipUnless(HAVE_TORCH, "needs torch")
    def test_dataloader_workers_report_the_files_they_open(self):
        paths = self.make_files(64)
        proc, files, _ = self.run_script("""
            import os, sys, torch

            class Files(torch.utils.data.Dataset):
                def __init__(self, folder):
                    self.paths = [os.path.join(folder, n) for n in sorted(os.listdir(folder))]
                def __len__(self):
                    return len(self.paths)
                def __getitem__(self, i):
                    with open(self.paths[i], "rb") as f:
                        return len(f.read())

            for batch in torch.utils.data.DataLoader(Files(sys.argv[1]), batch_size=8, num_workers=2):
                pass
            print("parent", os.getpid())
            """, self.data)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        parent = int(proc.stdout.split("parent")[1])
        workers = {m["pid"] for m in files} - {parent}
        self.assertTrue(workers, "no worker reported: %s" % files)
        self.assertTrue(set(self.paths_of(files)) <= set(paths))
        self.assertTrue(self.paths_of(files))

    def test_a_refused_hook_leaves_the_run_going_and_says_so(self):
        self.make_files(2)
        # A sitecustomize of the environment's own (saturate chains to it first) whose audit hook refuses new hooks.
        shadowed = os.path.join(self.tmp, "site")
        os.makedirs(shadowed)
        with open(os.path.join(shadowed, "sitecustomize.py"), "w") as f:
            f.write(textwrap.dedent("""
                import sys
                def refuse(event, args):
                    if event == "sys.addaudithook":
                        raise RuntimeError("no more hooks here")
                sys.addaudithook(refuse)
                """))
        proc, files, _ = self.run_script("""
            import os, sys
            for name in sorted(os.listdir(sys.argv[1])):
                with open(os.path.join(sys.argv[1], name), "rb") as f:
                    f.read()
            print("read them")
            """, self.data, extra_path=shadowed)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("read them", proc.stdout)
        self.assertIn("saturate: the data-file watch is off for this run: RuntimeError: sys.addaudithook did not "
                      "add it", proc.stderr)
        self.assertEqual(files, [])

    def test_nothing_is_watched_without_a_channel(self):
        script = os.path.join(self.tmp, "plain.py")
        with open(script, "w") as f:
            f.write("import sys\nprint('saturate._files' in sys.modules)\n")
        for receiver, watched in ((None, "False"), (self.receiver, "True")):
            proc = subprocess.run([sys.executable, script], env=saturate_env(receiver), capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(proc.stdout.strip(), watched)


if __name__ == "__main__":
    unittest.main()
