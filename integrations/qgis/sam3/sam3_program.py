"""The sam3 program, run as a child process: found, started, its progress read, stopped on cancel."""
import os
import re
import shutil
import subprocess
import threading

from qgis.core import QgsProcessingException

PROGRESS = re.compile(r"(\d+)/(\d+) tiles")
INSTALL_HINT = ("install sam3cpp (see docs/qgis.md), then give the program's path in the algorithm's "
                "\"sam3 program\" parameter, set SAM3_CLI, or put sam3 on PATH")


class Sam3Program:
    def __init__(self, given_path=""):
        self.path = given_path or os.environ.get("SAM3_CLI") or shutil.which("sam3")
        if not self.path:
            raise QgsProcessingException("the sam3 program was not found: " + INSTALL_HINT)
        if not (os.path.isfile(self.path) and os.access(self.path, os.X_OK)):
            raise QgsProcessingException("the sam3 program " + self.path + " is not an executable file: " + INSTALL_HINT)

    def run(self, args, feedback):
        """Runs sam3 with `args`; progress and messages go to `feedback`; cancelling stops it."""
        feedback.pushCommandInfo(" ".join([self.path] + args))
        try:
            child = subprocess.Popen([self.path] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True, errors="replace")
        except OSError as e:
            raise QgsProcessingException("cannot start " + self.path + ": " + str(e) + "; " + INSTALL_HINT)
        errors = []

        def read_stderr():
            for line in child.stderr:
                for part in line.replace("\r", "\n").splitlines():
                    part = part.strip()
                    match = PROGRESS.search(part)
                    if match and int(match.group(2)) > 0:
                        feedback.setProgress(100.0 * int(match.group(1)) / int(match.group(2)))
                    elif part:
                        errors.append(part)
                        feedback.pushInfo(part)

        def read_stdout():
            for line in child.stdout:
                feedback.pushInfo(line.rstrip())

        readers = [threading.Thread(target=f, daemon=True) for f in (read_stderr, read_stdout)]
        for reader in readers:
            reader.start()
        while True:
            try:
                child.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                if feedback.isCanceled():
                    child.terminate()  # sam3 stops between tiles and keeps the finished ones
                    try:
                        child.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        child.kill()
                        child.wait()
                    raise QgsProcessingException("cancelled")
        for reader in readers:
            reader.join(timeout=5)
        if child.returncode != 0:
            message = next((e for e in reversed(errors) if "error" in e.lower()), errors[-1] if errors else "")
            raise QgsProcessingException("sam3 failed (exit code " + str(child.returncode) + "): " + message)
