"""Algorithm modules. Each registers its entries in scheduling.registry when imported; the
registry imports them on first use (``registry.ENTRY_MODULES``), so importing this package alone
registers nothing."""
