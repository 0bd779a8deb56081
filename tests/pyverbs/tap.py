#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
Turn the result file of tests/pyverbs/suite.py (the unittest result of
rdma-core's pyverbs suite, one JSON object a line) into TAP lines:

  ok N - tests.test_qp.QPTest.test_create_rc_qp
  ok N - tests.test_srq.SRQTest.test_create_srq # SKIP <the suite's reason>
  not ok N - tests.test_x.Y.test_z # FAIL|ERROR|TIMEOUT|NOT RUN
  #   <the last lines of the traceback>

and end with "pyverbs: N passed, N failed, N skipped". Expected failures
count as passed, unexpected successes as failed (as unittest does). Tests
in the plan without a result (the run ended early) are failures.

Usage: tap.py RESULTS [--skips FILE] [--known-skips FILE] [--trace-lines N]
  --skips FILE        also write the skips, "ID<TAB>REASON" a line
  --known-skips FILE  the reviewed skip list (tests/pyverbs/skips.txt):
                      a comment line for every skip not in it, or whose
                      reason differs, and one more test,
                      pyverbs.skips_reviewed, that fails if there is any
Exit status: 0 if nothing failed.
"""

import argparse
import json
import sys


def load(path):
    plan, ends, subs, done = [], {}, {}, False
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            ev = rec.get('ev')
            if ev == 'plan' and not plan:
                plan = rec['ids']
            elif ev == 'end':
                ends[rec['id']] = rec
            elif ev == 'sub':
                subs.setdefault(rec['id'], []).append(rec)
            elif ev == 'done':
                done = True
    return plan, ends, subs, done


def one_line(text):
    return ' '.join(text.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('results')
    ap.add_argument('--skips')
    ap.add_argument('--known-skips')
    ap.add_argument('--trace-lines', type=int, default=12)
    args = ap.parse_args()

    plan, ends, subs, done = load(args.results)
    # setUpClass/setUpModule errors are results outside the plan
    ids = plan + [i for i in ends if i not in set(plan)]
    n = passed = failed = skipped = 0
    skips = []
    out = sys.stdout
    for tid in ids:
        n += 1
        rec = ends.get(tid)
        outcome = rec['outcome'] if rec else 'notrun'
        if outcome == 'pass' and tid in subs:
            outcome = subs[tid][0]['outcome']
            rec = subs[tid][0]
        if outcome == 'pass':
            passed += 1
            out.write(f'ok {n} - {tid}\n')
        elif outcome == 'xfail':
            passed += 1
            out.write(f'ok {n} - {tid} # expected failure\n')
        elif outcome == 'skip':
            skipped += 1
            reason = one_line(rec.get('detail', ''))
            skips.append((tid, reason))
            out.write(f'ok {n} - {tid} # SKIP {reason}\n')
        else:
            failed += 1
            detail = rec.get('detail', '') if rec else ''
            if outcome == 'notrun':
                tag = 'NOT RUN (the run ended before this test)'
            elif 'TestTimeout' in detail:
                tag = 'TIMEOUT'
            elif outcome == 'xpass':
                tag = 'UNEXPECTED SUCCESS'
            else:
                tag = outcome.upper()
            secs = rec.get('secs') if rec else None
            out.write(f'not ok {n} - {tid} # {tag}'
                      f'{f" after {secs} s" if secs is not None else ""}\n')
            lines = [ln for ln in detail.splitlines() if ln.strip()]
            for ln in lines[-args.trace_lines:]:
                out.write(f'#   {ln}\n')
    if args.known_skips:
        known = {}
        with open(args.known_skips) as f:
            for line in f:
                if line.startswith('#') or not line.strip():
                    continue
                cols = line.rstrip('\n').split('\t')
                if len(cols) >= 3:
                    known[cols[0]] = cols[2]
        unreviewed = 0
        for tid, reason in skips:
            if tid not in known:
                out.write(f'# skip not in {args.known_skips}: {tid}: {reason}\n')
                unreviewed += 1
            elif known[tid] != reason:
                out.write(f'# skip reason changed: {tid}: {reason}\n')
                unreviewed += 1
        # Every skip must be a reviewed one: one more test says so.
        n += 1
        if unreviewed:
            failed += 1
            out.write(f'not ok {n} - pyverbs.skips_reviewed # {unreviewed} '
                      f'skip(s) not in {args.known_skips} as listed above\n')
        else:
            passed += 1
            out.write(f'ok {n} - pyverbs.skips_reviewed '
                      f'({len(skips)} skips, all in {args.known_skips})\n')
    if not done:
        out.write('# the suite did not finish (the process died or timed out)\n')
    out.write(f'1..{n}\n')
    out.write(f'pyverbs: {passed} passed, {failed} failed, {skipped} skipped\n')
    if args.skips:
        with open(args.skips, 'w') as f:
            for tid, reason in skips:
                f.write(f'{tid}\t{reason}\n')
    return 1 if failed or not ids else 0


if __name__ == '__main__':
    sys.exit(main())
