"""The end of a run: who starts the last documents, which late request an idle model races, and
when the run is done."""
