#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
Run rdma-core's pyverbs test suite (tests/ of the rdma-core tree) the way
its run_tests.py does, with two additions that leave the suite untouched:

 * a per-test time limit (SIGALRM, --timeout seconds): a test that hangs
   fails with TestTimeout instead of stopping the whole run;
 * a result file (--results FILE) with one JSON object a line:
     {"ev": "plan", "ids": [...]}            every test the suite loads
     {"ev": "start", "id": ID}
     {"ev": "end", "id": ID, "outcome": "pass"|"fail"|"error"|"skip"|
      "xfail"|"xpass", "detail": TEXT, "secs": S}
   Skips carry the reason the suite gave; failures and errors the
   traceback. tests/pyverbs/tap.py turns the file into TAP.

A run resumes: tests that already have an "end" record are not run again,
and a test that has a "start" but no "end" (the process died in it) gets
an "error" record ("the test process died") and is not run again.

Usage: suite.py --suite DIR --results FILE [--timeout S] -- \
           --dev DEV --gid N [-v] [run_tests.py arguments]
"""

import argparse
import json
import os
import signal
import sys
import time
import traceback
import unittest
from importlib.machinery import SourceFileLoader


class TestTimeout(Exception):
    """A test ran past the per-test time limit."""


def on_alarm(signum, frame):
    raise TestTimeout('test did not finish within the per-test time limit')


class Recorder:
    def __init__(self, path):
        self.f = open(path, 'a', buffering=1)

    def put(self, **rec):
        self.f.write(json.dumps(rec) + '\n')
        self.f.flush()
        os.fsync(self.f.fileno())


def read_results(path):
    started, ended, planned = [], set(), None
    if not os.path.exists(path):
        return planned, started, ended
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            if rec.get('ev') == 'plan':
                planned = rec['ids']
            elif rec.get('ev') == 'start':
                started.append(rec['id'])
            elif rec.get('ev') == 'end':
                ended.add(rec['id'])
    return planned, started, ended


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def make_result_class(rec, timeout):
    base = unittest.TextTestResult

    class Result(base):
        def startTest(self, test):
            self._t0 = time.monotonic()
            rec.put(ev='start', id=test.id())
            super().startTest(test)
            if timeout:
                signal.alarm(timeout)

        def stopTest(self, test):
            signal.alarm(0)
            super().stopTest(test)

        def _end(self, test, outcome, detail=''):
            signal.alarm(0)
            # setUpClass errors come without startTest: no start time
            t0 = getattr(self, '_t0', None)
            rec.put(ev='end', id=test.id(), outcome=outcome, detail=detail,
                    secs=None if t0 is None else
                    round(time.monotonic() - t0, 2))

        def addSuccess(self, test):
            super().addSuccess(test)
            self._end(test, 'pass')

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._end(test, 'fail', self._exc_info_to_string(err, test))

        def addError(self, test, err):
            super().addError(test, err)
            self._end(test, 'error', self._exc_info_to_string(err, test))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._end(test, 'skip', str(reason))

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._end(test, 'xfail', self._exc_info_to_string(err, test))

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._end(test, 'xpass')

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                kind = 'fail' if issubclass(err[0], test.failureException) \
                    else 'error'
                rec.put(ev='sub', id=test.id(), outcome=kind,
                        detail=str(subtest) + '\n' +
                        self._exc_info_to_string(err, test))

    return Result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--suite', required=True,
                    help="the suite's directory (rdma-core's tests/)")
    ap.add_argument('--results', required=True)
    ap.add_argument('--timeout', type=int, default=300,
                    help='seconds per test (0: none)')
    ap.add_argument('rest', nargs=argparse.REMAINDER)
    args = ap.parse_args()
    rest = args.rest[1:] if args.rest[:1] == ['--'] else args.rest

    suite_dir = os.path.abspath(args.suite)
    # As run_tests.py: its directory first on sys.path, the package
    # loaded as "tests", the suite's own argument parser.
    sys.path.insert(0, suite_dir)
    sys.argv = [os.path.join(suite_dir, 'run_tests.py')] + rest
    from args_parser import parser
    tests = SourceFileLoader(
        'tests', os.path.join(suite_dir, '__init__.py')).load_module()
    parser.parse_args()
    verbosity = 2 if parser.get_config()['verbosity'] else 1
    # parse_args() leaves unittest's own options (e.g. --verbose) in argv
    names = [a for a in sys.argv[1:] if not a.startswith('-')]

    loader = unittest.TestLoader()
    if names:
        full = loader.loadTestsFromNames(names, tests)
    else:
        full = loader.loadTestsFromModule(tests)
    all_tests = list(flatten(full))

    rec = Recorder(args.results)
    planned, started, ended = read_results(args.results)
    if planned is None:
        rec.put(ev='plan', ids=[t.id() for t in all_tests])
    for tid in started:
        if tid not in ended:
            rec.put(ev='end', id=tid, outcome='error', secs=None,
                    detail='the test process died in this test '
                           '(see the log for its last output)')
            ended.add(tid)
    todo = unittest.TestSuite(t for t in all_tests
                              if t.id() not in ended)

    signal.signal(signal.SIGALRM, on_alarm)
    runner = unittest.TextTestRunner(
        stream=sys.stderr, verbosity=verbosity,
        resultclass=make_result_class(rec, args.timeout))
    result = runner.run(todo)
    rec.put(ev='done')
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
