"""``gpupool rightsize``: from the measured debt to a reviewed change of the stack files.

:mod:`.evidence` reads what a pool's window needed, :mod:`.propose` matches the kit's pools to
their stack entries and proposes new sizes, :mod:`.edit` writes them into the stack files
(round-trip, byte-identical elsewhere) and :mod:`.prbody` writes the pull request's text.
"""
