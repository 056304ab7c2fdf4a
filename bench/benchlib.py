"""What the benchmark scripts in bench/ share."""


def parse_size(text):
    """'1G', '512M', '4k' or a byte count, in binary units, as stormark reads sizes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower()
    if text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)
