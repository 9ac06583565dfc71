import type * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { describeDecodeErrors } from '../../models/decode';
import { describeUnexpectedShape, describeUnreachable, judgeAnswer, type FailureContext } from '../../svix/failures';
import { type Failure } from '../../zapier/io';

/**
 * A small Svix client for the command-line tools (set-up and sandbox),
 * on Node's own fetch. The Zapier app never imports it: it talks to the
 * Svix through z.request. Errors reuse the app's plain-English messages,
 * worded for a person at the terminal.
 */

export class SvixFailure extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
    this.name = 'SvixFailure';
  }
}

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
}

export interface Call extends Omit<FailureContext, 'reader'> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  body?: object;
  accept?: readonly number[];
  idempotencyKey?: string;
}

export interface Answer {
  status: number;
  body: unknown;
}

export class SvixClient {
  private readonly inFlight = new Set<Promise<Answer>>();
  private drained = false;

  constructor(private readonly options: ClientOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /**
   * Refuses every new call from now on, and resolves once each call in flight
   * has settled: answered, failed or timed out. What they made exists by then, answer or not.
   */
  async drain(): Promise<void> {
    this.drained = true;
    await Promise.allSettled([...this.inFlight]);
  }

  call(call: Call): Promise<Answer> {
    if (this.drained) {
      const failure: Failure = {
        kind: 'error',
        code: 'Stopped',
        status: 499,
        message: `Stopped before ${call.action}.`,
      };
      return Promise.reject(new SvixFailure(failure));
    }
    const made = this.send(call);
    this.inFlight.add(made);
    void made.then(
      () => this.inFlight.delete(made),
      () => this.inFlight.delete(made),
    );
    return made;
  }

  private async send(call: Call): Promise<Answer> {
    const url = new URL(`${this.options.baseUrl}${call.path}`);
    for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
    let response: Response;
    try {
      response = await fetch(url, {
        method: call.method,
        headers: {
          Authorization: `Bearer ${this.options.apiKey}`,
          Accept: 'application/json',
          'Content-Type': 'application/json',
          ...(call.idempotencyKey ? { 'Idempotency-Key': call.idempotencyKey } : {}),
        },
        ...(call.body ? { body: JSON.stringify(call.body) } : {}),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
    } catch (cause) {
      const reason =
        cause instanceof Error && cause.name === 'TimeoutError' ? { type: 'request-timeout' } : causeOf(cause);
      throw new SvixFailure(describeUnreachable(call.action, url.origin, reason, 'setup'));
    }
    const answer = judgeAnswer(
      response.status,
      await response.text(),
      { ...call, reader: 'setup' },
      response.headers.get('retry-after'),
    );
    if (!answer.ok) throw new SvixFailure(answer.failure);
    return { status: response.status, body: answer.body };
  }

  decode<A>(codec: t.Decoder<unknown, A>, body: unknown, action: string): A {
    const decoded = codec.decode(body);
    if (isRight(decoded)) return decoded.right;
    throw new SvixFailure(describeUnexpectedShape(action, describeDecodeErrors(decoded.left), 'setup'));
  }
}

/** fetch wraps network errors; the interesting code is on its cause. */
const causeOf = (error: unknown): unknown =>
  error instanceof Error && typeof error.cause === 'object' && error.cause !== null ? error.cause : error;
