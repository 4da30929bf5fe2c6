"""The values of one chosen letter: correct, misled, and whether duplicate
option texts decided it. The scorer (:mod:`.scorer`), its answer extraction
(:mod:`.extraction`) and the lm-eval tasks (``conflict_eval.lmeval.utils``)
score a letter with these."""

from conflict_eval.records import LETTERS


def _option_key(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def equivalent_letters(options: list[str] | None, letter: str | None) -> set[str]:
    """The letters whose option text is the text of ``letter``'s option (white
    space and case ignored); just ``{letter}`` without options.

    >>> sorted(equivalent_letters(["bent", "Bent ", "crooked"], "A"))
    ['A', 'B']
    """
    if letter is None:
        return set()
    if not options or letter not in LETTERS[:len(options)]:
        return {letter}
    key = _option_key(options[LETTERS.index(letter)])
    return {LETTERS[i] for i, o in enumerate(options) if _option_key(o) == key}


def choice_values(letter: str, gold: str, conflict_option: str | None,
                  options: list[str] | None) -> tuple[int, int, bool]:
    """``(accuracy, misled, by_text)`` of a parsed ``letter``: correct when its
    option text is the gold option's text, misled when it is the conflicting
    option's text and not also the gold text; ``by_text`` when duplicate option
    texts changed the result from a letter comparison."""
    golds = equivalent_letters(options, gold)
    conflicts = equivalent_letters(options, conflict_option) - golds
    accuracy, misled = int(letter in golds), int(letter in conflicts)
    by_text = (accuracy, misled) != (int(letter == gold),
                                     int(conflict_option is not None and letter == conflict_option))
    return accuracy, misled, by_text
