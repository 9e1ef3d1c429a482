// The lease worker against a broker: dotnet run --project samples/BrokerWorker -c Release
// (in-memory broker, all five modes); --bus postgres --workers 4 for worker processes on a real PostgreSQL. See README.md.
using System;
using BrokerWorker;

return await App.RunAsync(args, Console.Out, Console.Error);
