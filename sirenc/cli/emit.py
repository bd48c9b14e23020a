"""`sirenc FILE`: compile a program to a stage (--emit) or to the filter's shared library (-o)."""

from __future__ import annotations

import os
import sys

from sirenc.cli.compilation import open_program
from sirenc.cli.files import same_file
from sirenc.cli.warning_groups import print_warnings
from sirenc.diagnostics import SirenUsageError

BINARY_STAGES = ("obj",)     # products that are bytes, not text


def cmd_compile(args) -> int:
    from sirenc import driver
    from sirenc.backend.link import check_output, write_atomically

    if args.output == "":
        raise SirenUsageError("-o needs a file name (without -o, --emit prints to standard output)")
    stage = args.emit or ("so" if args.output else None)
    if stage is None:
        raise SirenUsageError("nothing to do: give -o FILE or --emit=STAGE")
    if args.output:
        check_output(args.output)     # before compiling: a directory or a device is refused
        if same_file(args.output, args.file):
            raise SirenUsageError(f"-o {args.output} would overwrite the program {args.file}; "
                                  "give the output a file of its own")
    elif stage in BINARY_STAGES and sys.stdout.isatty():
        raise SirenUsageError(f"--emit={stage} writes binary data, and standard output is a terminal; "
                              f"give -o FILE (or redirect: > model.o)")
    c = open_program(args, check=not args.no_check)
    if args.output:
        check_not_data(c, args.output)
    product = driver.run_until(c, stage)
    print_warnings(c, args.warnings)
    if stage == "ast":
        text = driver.ast_text(product)
        if args.output:
            write_atomically(args.output, (text + "\n").encode())
        else:
            print(text)
    elif stage == "jax":
        text = product.text()
        if args.output:
            write_atomically(args.output, (text + "\n").encode())
        else:
            print(text)
    elif stage in ("obj", "so"):
        data = product if isinstance(product, bytes) else open(product, "rb").read()
        if args.output:
            write_atomically(args.output, data, mode=0o777 if stage == "so" else 0o666)
        elif stage == "obj":
            sys.stdout.buffer.write(data)
        else:
            print(product)
    else:
        text = product if isinstance(product, str) else str(product)
        if args.output:
            write_atomically(args.output, (text + "\n").encode())
        else:
            print(text)
    return 0


def check_not_data(c, output: str) -> None:
    """A usage error if ``output`` is a data file that compilation ``c``'s program names: every
    string of a Siren program is a file name (File.read's), resolved as the lowering resolves it."""
    from sirenc import driver
    from sirenc.frontend import ast

    driver.run_until(c, "ast")
    pending = [c.products["ast"].program]
    while pending:           # not recursive: a long chain of `let`s is a deep tree
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, ast.Const):
            if isinstance(node.value, str) and node.value and "\0" not in node.value \
                    and same_file(output, os.path.join(c.base_dir, node.value)):
                raise SirenUsageError(f"-o {output} would overwrite {node.value}, a data file of the program; "
                                      "give the output a file of its own")
        elif isinstance(node, ast.Node):
            pending.extend(v for v in vars(node).values() if isinstance(v, ast.Node | list))
