"""Rendering: templates (``{name}`` and ``{{dotted.path}}``), a row's evaluatorq namespace, and the chat
messages of one (row, judge), shared prefix first."""
