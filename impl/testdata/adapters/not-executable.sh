#!/bin/sh
# A broken adapter for impl's TestBadAdapters: it is not executable.
echo never
