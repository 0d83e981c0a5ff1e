"""pytest plugin (-p pytest_remove_basetemp): removes the session's --basetemp folder when the
session ends. Without it pytest 7.2 (Debian 12's) keeps its last three sessions' folders under
/tmp/pytest-of-USER and has no setting to keep none. SAM3_KEEP_TEST_DIRS=1 keeps the folder for a
look, as it keeps the C++ tests' folders."""
import os
import shutil


def pytest_sessionfinish(session):
    base = session.config.getoption("basetemp")
    if base and os.environ.get("SAM3_KEEP_TEST_DIRS") != "1":
        shutil.rmtree(base, ignore_errors=True)
