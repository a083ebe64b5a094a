"""Find: walk a dump dir (natural order, ranks), the --root and URL path policy, and the one
decision per file: a dump (of which format), a metrics log, or unknown.  Imports the schema,
limits and the formats' detection; never index, serve or the UI."""
