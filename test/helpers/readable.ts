/**
 * What every message a person reads in Zapier must be: Zapier shows at most
 * 250 characters of it; what to do comes first (within 150 characters); it
 * carries no HTTP status or header name (those go to the log), never a key or
 * a secret, and a message ID only where the person needs it to resend.
 */

export const ZAPIER_LIMIT = 250;
/** What a message may take of it: Zapier may put a prefix of its own before it (#54). */
export const MESSAGE_BUDGET = 230;

/** A message opens with the person's next step, a condition of at most 100 characters aside. */
const FIRST_STEP =
  /^(If [^,:]{1,100}, )?(reconnect|check|try|turn|open|ask|resend|show|send|tell|nothing to do|copy|leave|give|start|run|keep|create|fix)\b/i;
const STATUS = /(?<![\d.])\b[1-5]\d\d\b(?![\d.]| (seconds?|characters|events|messages))/;
const HEADER = /\b(svix|webhook)-(id|timestamp|signature)\b|retry-after|content-type|authorization|x-token/i;
const SECRET = /whsec_|testsk_|sk_|integsk_[A-Za-z0-9]/;
const MESSAGE_ID = /\bmsg_[A-Za-z0-9]{27}\b/;
const RESEND = /\b(Resend|resend|send event)\b/;

/** Each rule the message breaks, in a word; none for a message a person can read in Zapier. */
export const problemsWith = (message: string): string[] => {
  const problems: string[] = [];
  if (message.length > MESSAGE_BUDGET) problems.push(`${message.length} characters`);
  // What to do comes first: at the start, or after a condition ("If this keeps happening, …"), within 150 characters.
  if (!FIRST_STEP.test(message)) problems.push('does not start with what to do');
  if (STATUS.test(message)) problems.push('an HTTP status');
  if (HEADER.test(message)) problems.push('a header name');
  if (SECRET.test(message)) problems.push('a key or secret');
  if (MESSAGE_ID.test(message) && !RESEND.test(message)) problems.push('a message ID with no resend');
  return problems;
};

/** Every message with what it breaks, for one assertion that names them all. */
export const unreadable = (messages: readonly string[]): string[] =>
  messages.flatMap((message) => {
    const problems = problemsWith(message);
    return problems.length > 0 ? [`${problems.join(', ')}: ${message}`] : [];
  });
