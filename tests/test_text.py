from naus.text import gigaword_line, normalize


def test_normalize_follows_gigaword_convention():
    assert normalize('He said "it\'s 50-50" (roughly) on Wednesday.') == (
        "he said `` it 's ##-## '' -lrb- roughly -rrb- on wednesday ."
    )
    assert normalize("U.S. shares don't rise 3.5% in Japan's markets") == (
        "u.s. shares do n't rise #.# % in japan 's markets"
    )


def test_normalize_maps_typographic_quotes_and_blank_input():
    assert normalize("The \u201cbig\u201d deal\u2019s off \u2014 again") == "the `` big '' deal 's off -- again"
    assert normalize("   \t ") == ""


def test_gigaword_line_rewrites_unk():
    assert gigaword_line("the <unk> said  <unk>") == "the UNK said UNK"
