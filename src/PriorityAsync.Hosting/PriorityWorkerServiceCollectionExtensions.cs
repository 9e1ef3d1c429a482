using System;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using PriorityAsync.Hosting.Internal;

namespace PriorityAsync.Hosting;

/// <summary>Registers priority workers with a host's services.</summary>
public static class PriorityWorkerServiceCollectionExtensions
{
    /// <summary>The log category of every priority worker: <c>PriorityAsync.Hosting.PriorityBackgroundService</c>.</summary>
    public const string LogCategory = "PriorityAsync.Hosting.PriorityBackgroundService";

    /// <summary>
    /// Registers <typeparamref name="TWorker"/> as a hosted service named after its type, with options bound from the configuration
    /// section <c>PriorityAsync:Workers:&lt;type name&gt;</c> and validated when the host starts.
    /// </summary>
    /// <typeparam name="TWorker">The worker; created by the container, so its constructor may take any registered service.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="configure">Sets options in code; runs before the configuration is bound, so configuration wins.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is <see langword="null"/>.</exception>
    public static IServiceCollection AddPriorityWorker<TWorker>(this IServiceCollection services, Action<PriorityWorkerOptions>? configure = null)
        where TWorker : PriorityBackgroundService
        => services.AddPriorityWorker<TWorker>(typeof(TWorker).Name, configure);

    /// <summary>
    /// Registers <typeparamref name="TWorker"/> as a hosted service called <paramref name="name"/>, with options bound from the
    /// configuration section <c>PriorityAsync:Workers:&lt;name&gt;</c> and validated when the host starts: invalid settings stop
    /// the host from starting with an <see cref="OptionsValidationException"/> naming the key, the value and the valid range.
    /// </summary>
    /// <typeparam name="TWorker">The worker; created by the container, so its constructor may take any registered service.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="name">The worker's name: its configuration section, thread name and the name in its log messages. Register the
    /// same type several times under different names to run several workers.</param>
    /// <param name="configure">Sets options in code; runs before the configuration is bound, so configuration wins.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="name"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, white space, or contains a colon (the configuration key separator).</exception>
    public static IServiceCollection AddPriorityWorker<TWorker>(this IServiceCollection services, string name, Action<PriorityWorkerOptions>? configure = null)
        where TWorker : PriorityBackgroundService
        => services.AddWorker<TWorker>(name, configure);

    /// <summary>
    /// Registers <typeparamref name="TWorker"/>, a worker on a <see cref="PriorityThreadPool"/> (several threads), as a hosted service
    /// named after its type, with options bound from the configuration section <c>PriorityAsync:Workers:&lt;type name&gt;</c> and
    /// validated when the host starts.
    /// </summary>
    /// <typeparam name="TWorker">The worker; created by the container, so its constructor may take any registered service.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="configure">Sets options in code; runs before the configuration is bound, so configuration wins.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is <see langword="null"/>.</exception>
    public static IServiceCollection AddPriorityThreadPoolWorker<TWorker>(this IServiceCollection services, Action<PriorityWorkerOptions>? configure = null)
        where TWorker : PriorityThreadPoolBackgroundService
        => services.AddPriorityThreadPoolWorker<TWorker>(typeof(TWorker).Name, configure);

    /// <summary>
    /// Registers <typeparamref name="TWorker"/>, a worker on a <see cref="PriorityThreadPool"/> (several threads), as a hosted service
    /// called <paramref name="name"/>, with options bound from the configuration section <c>PriorityAsync:Workers:&lt;name&gt;</c> (the
    /// same keys as <see cref="AddPriorityWorker{TWorker}(IServiceCollection, string, Action{PriorityWorkerOptions}?)"/>, plus
    /// <c>ThreadCount</c> and <c>MaxConcurrencyPerLevel</c>) and validated when the host starts: invalid settings stop the host from
    /// starting with an <see cref="OptionsValidationException"/> naming the key, the value and the valid range.
    /// </summary>
    /// <typeparam name="TWorker">The worker; created by the container, so its constructor may take any registered service.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="name">The worker's name: its configuration section, its threads' names and the name in its log messages.</param>
    /// <param name="configure">Sets options in code; runs before the configuration is bound, so configuration wins.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="name"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, white space, or contains a colon (the configuration key separator).</exception>
    public static IServiceCollection AddPriorityThreadPoolWorker<TWorker>(this IServiceCollection services, string name, Action<PriorityWorkerOptions>? configure = null)
        where TWorker : PriorityThreadPoolBackgroundService
        => services.AddWorker<TWorker>(name, configure);

    // One registration for both kinds of worker: named options bound and validated, the worker created by the container and
    // configured before the host starts it.
    private static IServiceCollection AddWorker<TWorker>(this IServiceCollection services, string name, Action<PriorityWorkerOptions>? configure)
        where TWorker : class, IHostedService, IPriorityWorker
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        if (name.Contains(':', StringComparison.Ordinal))
        {
            throw new ArgumentException($"The worker name '{name}' contains ':', the configuration key separator; use a name without it.", nameof(name));
        }

        OptionsBuilder<PriorityWorkerOptions> options = services.AddOptions<PriorityWorkerOptions>(name);
        if (configure is not null)
        {
            options.Configure(configure);
        }

        options.BindConfiguration($"{PriorityWorkerOptions.WorkersSection}:{name}").ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<PriorityWorkerOptions>, PriorityWorkerOptionsValidator>());

        services.AddSingleton<IHostedService>(provider =>
        {
            TWorker worker = ActivatorUtilities.CreateInstance<TWorker>(provider);
            ILogger logger = provider.GetService<ILoggerFactory>()?.CreateLogger(LogCategory) ?? NullLogger.Instance;
            // The host's clock, as other Microsoft.Extensions components take it: a TimeProvider registered in the container
            // (a test's FakeTimeProvider), else the system's.
            TimeProvider timeProvider = provider.GetService<TimeProvider>() ?? TimeProvider.System;
            worker.Core.Configure(name, provider.GetRequiredService<IOptionsMonitor<PriorityWorkerOptions>>().Get(name), timeProvider, logger);
            return worker;
        });
        return services;
    }
}
