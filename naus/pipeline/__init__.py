"""The experiment plan: what each table and figure needs (tables), where every file lies (layout), the configuration's
schema, fingerprints and bundles. It imports the library; the library never imports it."""
