"""PDFs written byte by byte for tests that need a property no generator gives (fpdf2 always writes a usable text
layer)."""

from __future__ import annotations


def pdf_with_unmapped_text(pages: list[tuple[str, bool]]) -> bytes:
    """A PDF showing each page's text in Helvetica; on a page marked True the font's ToUnicode map sends every
    printable character to U+FFFD, so pypdf extracts replacement characters, as from a filing whose text layer is
    broken."""
    cmap = ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Unmapped def "
            "1 begincodespacerange <00> <FF> endcodespacerange 95 beginbfchar "
            + " ".join(f"<{c:02X}> <FFFD>" for c in range(0x20, 0x7F))
            + " endbfchar endcmap CMapName currentdict /CMap defineresource pop end end")
    objs = {1: "<< /Type /Catalog /Pages 2 0 R >>", 3: f"<< /Length {len(cmap)} >>\nstream\n{cmap}\nendstream",
            4: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 3 0 R >>",
            5: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for i, (text, unmapped) in enumerate(pages):
        content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        page, stream = 6 + 2 * i, 7 + 2 * i
        objs[page] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                      f"/Resources << /Font << /F1 {4 if unmapped else 5} 0 R >> >> /Contents {stream} 0 R >>")
        objs[stream] = f"<< /Length {len(content)} >>\nstream\n{content}\nendstream"
        kids.append(f"{page} 0 R")
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for n in sorted(objs):
        offsets[n] = len(out)
        out += f"{n} 0 obj\n{objs[n]}\nendobj\n".encode()
    xref, size = len(out), max(objs) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offsets[n]:010d} 00000 n \n" for n in range(1, size)).encode()
    out += f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
