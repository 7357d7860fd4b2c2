"""What the NEXMark scripts share about reading CSV files: the error that names the file and
line, and opening a file for csv.reader."""


class InputError(Exception):
    """Bad input: the message names the file and line."""


def open_csv(path):
    """The file at `path`, opened for csv.reader (UTF-8, newlines left to the reader), or an
    InputError saying why it cannot be opened."""
    try:
        return open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError("%s: cannot open: %s" % (path, e.strerror))
