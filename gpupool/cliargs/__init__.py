"""The arguments of ``gpupool``'s commands, declared apart from the commands themselves.

``gpupool --help`` builds every subparser, so these modules import nothing but argparse and
:mod:`gpupool.argtypes`: each command's code (``gpupool.commands.<name>``, with its Pulumi,
boto3 or rich) is imported only when it runs. :mod:`gpupool.cliargs.parser` is the parser that
teaches (did-you-mean, one-line usage errors); the other modules hold one ``add_<command>``
function per command, grouped by what the commands work on.
"""
