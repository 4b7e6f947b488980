from naus.text import gigaword_line, mask_digits, normalize, restore_digits


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


def test_digits_masked_for_the_models_are_restored_from_the_source_in_order():
    source = "in 1998 , 12 people and 1,000 more died ; 1999 saw 12"
    assert mask_digits(source) == "in #### , ## people and #,### more died ; #### saw ##"
    summary = "#### : ## people , #,### died ; #### ##"
    assert restore_digits(summary, source) == "1998 : 12 people , 1,000 died ; 1999 12"
    assert restore_digits("## ## ##", "12") == "12 ## ##"  # no source word left: stays masked
    assert restore_digits("no digits here", source) == "no digits here"
