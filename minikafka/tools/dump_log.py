"""minikafka dump-log: kafka-dump-log.sh for the segment files minikafka writes.

    minikafka dump-log --files data/orders-0/00000000000000000000.log --print-data-log

A cluster made with ``Cluster(log_dir="data")`` keeps each partition's segments
there, in Kafka's file layout. Each .log file is shown batch by batch (offsets,
producer id and epoch, sequences, flags, codec, CRC and whether it checks), with
every record under --print-data-log, followed by its .index and .timeindex.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ._common import ToolError, one_line_errors, run_tool


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "dump-log", help="show the batches and records of log segment files "
                         "(kafka-dump-log.sh)",
        description="Print the record batches of minikafka (or Kafka) log segment files, "
                    "like kafka-dump-log.sh.")
    one_line_errors(p)
    p.add_argument("--files", required=True, metavar="FILE[,FILE...]",
                   help="comma-separated .log segment files")
    p.add_argument("--print-data-log", action="store_true",
                   help="also print every record: key, payload, headers")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    return run_tool(lambda: dump(args))


def dump(args: argparse.Namespace) -> int:
    from ..dump import dump_files

    for name in (f for f in args.files.split(",") if f.strip()):
        path = Path(name.strip())
        if path.suffix != ".log":
            raise ToolError(f"{path}: give the segment's .log file (its .index and "
                            ".timeindex are shown with it)")
        if not path.is_file():
            raise ToolError(f"{path}: no such file")
        if not path.stem.isdigit():
            raise ToolError(f"{path}: not a segment file (its name is the base offset, "
                            "e.g. 00000000000000000000.log)")
        print(dump_files(path).render(print_data_log=args.print_data_log))
    return 0
