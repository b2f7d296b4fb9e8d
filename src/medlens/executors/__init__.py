"""Executors beyond the local one (which lives in :mod:`medlens.execution.execute`): where items run.

Each executor has the shape of :func:`medlens.execution.execute.run_local` and calls ``on_record`` in the
driver process once per finished item; only the driver writes the run store. Imported lazily
(``--executor ray`` imports :mod:`medlens.executors.ray`, and with it Ray).
"""
