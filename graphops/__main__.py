from graphops.cli.command import entry

entry()
