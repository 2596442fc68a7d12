from scheduling.cli import entry

entry()
