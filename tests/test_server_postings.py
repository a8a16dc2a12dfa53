"""What a server text search reads of its words' postings, and when the rows it ranked are provably the first k."""

from owl_memory.store.server.layout import IDX
from owl_memory.store.server.postings import Bucket, Cut, bm25, bucket, cut, floored, parse_bucket, plan

AVGDL = 20.0
WORDS = [("rare", 3.0, (Bucket(2, 12, 4), Bucket(1, 12, 40), Bucket(1, 30, 400))),
         ("common", 0.5, (Bucket(3, 15, 30), Bucket(1, 15, 3000), Bucket(1, 40, 9000)))]


def test_a_bucket_names_its_frequency_and_length():
    assert parse_bucket(bucket(3, 17)) == (3, 17)
    assert parse_bucket(IDX.length) is None


def test_an_unread_item_that_could_outrank_the_kth_row_keeps_the_read_open():
    """Two words each with an unread posting worth up to 2.0 and 1.0: an item holding both could score 3.0."""
    c = Cut((), (2.0, 1.0))
    assert not c.exact([(2, 2.9)], 1)
    assert c.exact([(2, 3.1)], 1)
    assert not c.exact([(0, 2.5)], 1)  # an unread item holding both words is a level higher
    assert Cut((), (None, 1.0)).exact([(0, 1.5)], 1)  # the first word read whole: no unread item holds both


def test_a_conjunctive_read_proves_only_rows_holding_every_word():
    c = Cut((), (2.0, 1.0), conjunctive=True)
    assert c.exact([(2, 3.1)], 1) and not c.exact([(2, 2.9)], 1) and not c.exact([(1, 9.0)], 1)


def test_floored_reads_just_enough_to_prove_the_kth_row():
    """The read floored plans proves the rows it was given, and leaves the long tails of both words unread."""
    best = bm25(3.0, 2, 12, AVGDL) + bm25(0.5, 1, 15, AVGDL)
    levels = [(2, best)]
    how = floored(WORDS, AVGDL, levels, 1)
    read = cut(WORDS, AVGDL, how)
    assert read.exact(levels, 1) and read.conjunctive
    assert all(x is not None for x in read.outside)  # neither word read whole
    assert (WORDS[1][0], bucket(1, 40)) not in read.pairs


def test_a_first_read_of_one_word_takes_its_best_buckets():
    how = plan([0.01], 5, 100_000, kinds=False)
    read = cut(WORDS[:1], AVGDL, how)
    assert read.pairs == (("rare", bucket(2, 12)), ("rare", bucket(1, 12)))
    assert read.outside == (bm25(3.0, 1, 30, AVGDL),)
