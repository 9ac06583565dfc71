/**
 * The guide names the integration as the App Directory lists it (package.json's appDirectory.title): in its
 * heading, "# <name> in Zapier: a guide", and in bold wherever a person looks for it in Zapier. `npm run docs`
 * renames it after the listing changes, so the name is set in one place.
 */
const HEADING = /^# (.+) in Zapier: a guide$/m;

/** The name the guide uses now, from its heading. */
export const guideIntegrationName = (guide: string): string | undefined => HEADING.exec(guide)?.[1];

/** The guide with the integration's name replaced by `name`, in its heading and wherever it is in bold. */
export const withIntegrationName = (guide: string, name: string): string => {
  const old = guideIntegrationName(guide);
  if (old === undefined) throw new Error('the guide has no "# … in Zapier: a guide" heading');
  return guide.replace(HEADING, `# ${name} in Zapier: a guide`).split(`**${old}**`).join(`**${name}**`);
};
