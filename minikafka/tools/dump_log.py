"""minikafka dump-log: kafka-dump-log.sh for the segment files minikafka writes.

    minikafka dump-log --files data/broker-1/orders-0/00000000000000000000.log --print-data-log

A cluster made with ``Cluster(log_dir="data")`` keeps each partition's segments
there, in Kafka's file layout. As in Kafka's tool, each file named is dumped the
way its suffix says: a .log batch by batch (offsets, producer id and epoch,
sequences, flags, codec, CRC and whether it checks), with every record under
--print-data-log; a .index as offset -> position entries; a .timeindex as
timestamp -> offset entries. Other files are ignored with a note on stderr.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._common import ToolError, one_line_errors, run_tool


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "dump-log", help="show the batches and records of log segment files "
                         "(kafka-dump-log.sh)",
        description="Print the record batches of minikafka (or Kafka) log segment files, "
                    "and their index files, like kafka-dump-log.sh.")
    one_line_errors(p)
    p.add_argument("--files", required=True, metavar="FILE[,FILE...]",
                   help="comma-separated segment files: .log, .index or .timeindex")
    p.add_argument("--print-data-log", action="store_true",
                   help="also print every record: key, payload, headers")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    return run_tool(lambda: dump(args))


def dump(args: argparse.Namespace) -> int:
    from ..dump import (
        OFFSET_INDEX_LINE,
        TIME_INDEX_LINE,
        dump_files,
        index_lines,
        read_offset_index,
        read_time_index,
    )

    indexes = {".index": (read_offset_index, OFFSET_INDEX_LINE),
               ".timeindex": (read_time_index, TIME_INDEX_LINE)}
    for name in (f.strip() for f in args.files.split(",") if f.strip()):
        path = Path(name)
        known = path.suffix == ".log" or path.suffix in indexes
        if known and not path.is_file():
            raise ToolError(f"{path}: no such file")
        if known and not path.stem.isdigit():
            raise ToolError(f"{path}: not a segment file (its name is the base offset, "
                            "e.g. 00000000000000000000.log)")
        print(f"Dumping {name}")
        if not known:
            print(f"Ignoring unknown file {name}", file=sys.stderr)
        elif path.suffix == ".log":
            print("\n".join(dump_files(path).log_lines(args.print_data_log)))
        else:
            read, line = indexes[path.suffix]
            print("\n".join(index_lines(name, read(path), line)))
    return 0
