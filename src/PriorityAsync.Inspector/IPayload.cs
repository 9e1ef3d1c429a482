namespace PriorityAsync.Inspector;

/// <summary>A payload of one event, read by field name (the fields docs/inspector.md lists).</summary>
internal interface IPayload
{
    int Int(string name);

    long Long(string name);

    double Double(string name);

    string String(string name);

    /// <summary>Whether the event carries the field (an older version of an event lacks the fields added later).</summary>
    bool Has(string name);
}
