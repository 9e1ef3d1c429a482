namespace PriorityAsync.Inspector;

/// <summary>What the tool runs on: whether standard input and standard output are a terminal.</summary>
/// <param name="Keys">Standard input is a terminal: q is a key press (else a line "q" on standard input).</param>
/// <param name="Screen">Standard output is a terminal: the live view redraws in place (else it prints plain frames, one after another).</param>
internal sealed record Terminal(bool Keys, bool Screen);
