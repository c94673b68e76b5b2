import sys

from benchmarks.mistake_corpus.corpus import main

main(sys.argv[1:])
