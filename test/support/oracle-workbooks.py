"""Writes the same rows as openpyxl and XlsxWriter write them (Debian's
python3-openpyxl and python3-xlsxwriter), for the spreadsheet-oracle tests.

stdin: {"dir": "...", "rows": [[cell, ...], ...], "formulas": bool}, a cell
being {"text": "..."} | {"number": n} | {"formula": "=..."}, with an optional
"format" (a number format code). Prints the JSON list of the files written: a
library that is not installed is left out (the test says so).
"""
import json
import os
import sys

spec = json.load(sys.stdin)
rows = spec["rows"]
written = []


def value(cell):
    if "text" in cell:
        return cell["text"]
    if "number" in cell:
        return cell["number"]
    return cell["formula"]


try:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for r, row in enumerate(rows, start=1):
        for c, cell in enumerate(row, start=1):
            if cell is None:
                continue
            target = sheet.cell(row=r, column=c, value=value(cell))
            if "format" in cell:
                target.number_format = cell["format"]
    path = os.path.join(spec["dir"], "openpyxl.xlsx")
    book.save(path)
    written.append(path)
except ImportError:
    pass

try:
    import xlsxwriter

    path = os.path.join(spec["dir"], "xlsxwriter.xlsx")
    book = xlsxwriter.Workbook(path)
    sheet = book.add_worksheet()
    formats = {}
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            if cell is None:
                continue
            style = None
            if "format" in cell:
                code = cell["format"]
                style = formats.setdefault(code, book.add_format({"num_format": code}))
            if "text" in cell:
                sheet.write_string(r, c, cell["text"], style)
            elif "number" in cell:
                sheet.write_number(r, c, cell["number"], style)
            else:
                sheet.write_formula(r, c, cell["formula"], style)
    book.close()
    written.append(path)
except ImportError:
    pass

print(json.dumps(written))
