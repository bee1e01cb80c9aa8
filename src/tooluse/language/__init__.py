"""What tooluse reads of a text's words: the words themselves (split, stemmed, the stop
words aside), the numbers a text writes without digits standing alone, the lists it writes,
and the spans a tool call's value may copy.

Every reading is written once here: the value copier of the local engine
(:mod:`tooluse.llama.copy_values`) and the opt-in rules of a preset (:mod:`tooluse.presets`)
read with the same functions. The word lists are English (stop words, number words, month
names, units); a text in another language is read with them too, and finds less.

- :mod:`.words`: words, stems, the stop words, whether and where a text gives a value;
- :mod:`.numbers`: numbers in words, ordinals, scales, units, month names;
- :mod:`.lists`: the lists a question writes ("Paris, London and Rome");
- :mod:`.spans`: the spans of a conversation a value may copy.
"""
