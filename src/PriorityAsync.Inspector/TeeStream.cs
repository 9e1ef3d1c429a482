using System;
using System.IO;

namespace PriorityAsync.Inspector;

/// <summary>A read-only stream that copies what is read from <paramref name="source"/> into <paramref name="copy"/>: the recording is
/// exactly the stream the view was drawn from.</summary>
internal sealed class TeeStream(Stream source, Stream copy) : Stream
{
    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override int Read(byte[] buffer, int offset, int count)
    {
        int read = source.Read(buffer, offset, count);
        if (read > 0)
        {
            copy.Write(buffer, offset, read);
        }

        return read;
    }

    public override void Flush() => copy.Flush();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            copy.Flush();
        }

        base.Dispose(disposing);
    }
}
