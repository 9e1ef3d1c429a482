namespace PriorityAsync.Inspector.Tests;

/// <summary>An event's fields for the model, as a test writes them.</summary>
internal sealed class Payload : Dictionary<string, object>, IPayload
{
    public int Int(string name) => Convert.ToInt32(this[name], System.Globalization.CultureInfo.InvariantCulture);

    public long Long(string name) => Convert.ToInt64(this[name], System.Globalization.CultureInfo.InvariantCulture);

    public double Double(string name) => Convert.ToDouble(this[name], System.Globalization.CultureInfo.InvariantCulture);

    public string String(string name) => (string)this[name];

    public bool Has(string name) => ContainsKey(name);
}
