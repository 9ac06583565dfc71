/**
 * What a platform error says, read back from what core's handler threw: its
 * name, and for core's own Error and ThrottledError (whose message is JSON)
 * the plain message, code, status and delay. For the Zapier stand-in, the
 * benchmark and the tests.
 */
export interface ErrorDetails {
  name: string;
  message: string;
  code?: string;
  status?: number;
  delay?: number;
}

export const errorDetails = (error: unknown): ErrorDetails => {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error) };
  // Outside tests core appends the invocation's console lines to the message.
  const text = error.message.split('\n\nConsole logs:')[0] ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { name: error.name, message: text };
  }
  if (typeof parsed !== 'object' || parsed === null || !('message' in parsed) || typeof parsed.message !== 'string') {
    return { name: error.name, message: text };
  }
  const code = 'code' in parsed && typeof parsed.code === 'string' ? parsed.code : undefined;
  const status = 'status' in parsed && typeof parsed.status === 'number' ? parsed.status : undefined;
  const delay = 'delay' in parsed && typeof parsed.delay === 'number' ? parsed.delay : undefined;
  return {
    name: error.name,
    message: parsed.message,
    ...(code === undefined ? {} : { code }),
    ...(status === undefined ? {} : { status }),
    ...(delay === undefined ? {} : { delay }),
  };
};
