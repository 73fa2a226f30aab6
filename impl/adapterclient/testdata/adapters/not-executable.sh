#!/bin/sh
# A broken adapter for impl/adapterclient's TestBadAdapters: it is not executable.
echo never
