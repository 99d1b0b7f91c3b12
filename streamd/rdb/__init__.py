"""Redis's RDB object encoding, as DUMP and RESTORE use it."""
