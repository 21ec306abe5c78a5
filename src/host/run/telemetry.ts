/**
 * OpenTelemetry spans for runs and their calls, when `@opentelemetry/api` is installed (an
 * optional peer dependency): one span per run, and one child span per binding call carrying the
 * call's record. The tool runs with its call's span as the active context, so spans the tool
 * makes itself (an instrumented HTTP client) nest under it. Only names, outcomes, byte sizes
 * and error messages are recorded: never arguments, results or the program's source.
 *
 * Without the package, this costs one failed lookup per process; without a registered tracer
 * provider (a run span that records nothing and carries no trace), one no-op span per run, and
 * its calls make none.
 */
import { createRequire } from 'node:module'
import type * as OtelApi from '@opentelemetry/api'
import type { PtcCallRecord, PtcRunResult } from '../../seam/types.js'

type Api = typeof OtelApi
let api: Api | null | undefined

function otel(): Api | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api') as Api
    } catch {
      api = null
    }
  }
  return api
}

/** The span of one call: the tool runs inside it, and it ends with the call's record. */
export interface CallTelemetry {
  within<T>(work: () => T): T
  end(record: PtcCallRecord): void
}

/** The span of one run. */
export interface RunTelemetry {
  call(tool: string): CallTelemetry
  end(result: PtcRunResult): void
}

/** The instrumentation scope name spans are recorded under. */
export const TRACER_NAME = 'ptc-runtime'

/**
 * `startRunTelemetry` where the API is installed, else undefined: looked up once, as a runtime is
 * made, so that without the package a run calls nothing here.
 */
export function runTelemetry(): (() => RunTelemetry | undefined) | undefined {
  return otel() === null ? undefined : startRunTelemetry
}

/** Starts the span of a run, a child of the caller's active span; undefined without the API or a tracer that records or propagates. */
export function startRunTelemetry(): RunTelemetry | undefined {
  const otelApi = otel()
  if (otelApi === null) return undefined
  const { trace, context, SpanStatusCode, isSpanContextValid } = otelApi
  const tracer = trace.getTracer(TRACER_NAME)
  const runSpan = tracer.startSpan('ptc.run')
  if (!runSpan.isRecording() && !isSpanContextValid(runSpan.spanContext())) return undefined
  const runContext = trace.setSpan(context.active(), runSpan)
  return {
    call(tool) {
      const span = tracer.startSpan(
        `execute_tool ${tool}`,
        { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool } },
        runContext,
      )
      const callContext = trace.setSpan(runContext, span)
      return {
        within: (work) => context.with(callContext, work),
        end(record) {
          span.setAttributes({
            'ptc.call.outcome': record.outcome,
            'ptc.call.start_ms': record.startMs,
            'ptc.call.duration_ms': record.durationMs,
            'ptc.call.argument_bytes': record.argumentBytes,
            ...(record.resultBytes !== undefined ? { 'ptc.call.result_bytes': record.resultBytes } : {}),
          })
          if (record.outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: record.error ?? record.outcome })
          span.end()
        },
      }
    },
    end(result) {
      runSpan.setAttributes({ 'ptc.run.outcome': result.error ? result.error.kind : 'ok', 'ptc.run.calls': result.calls.length })
      if (result.error) runSpan.setStatus({ code: SpanStatusCode.ERROR, message: result.error.message })
      runSpan.end()
    },
  }
}
