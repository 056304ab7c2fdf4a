"""What the benchmark scripts in bench/ share."""
import os

# Debian's bonnie++ 2.00 (package bonnie++), or None where it is not installed.
BONNIE = next((p for p in ("/usr/sbin/bonnie++", "/usr/bin/bonnie++") if os.access(p, os.X_OK)),
              None)


def parse_size(text):
    """'1G', '512M', '4k' or a byte count, in binary units, as stormark reads sizes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower()
    if text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)
