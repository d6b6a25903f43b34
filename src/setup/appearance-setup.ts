/**
 * The visible signature box as the front ends' forms and flags give it (a choice and a few text fields) → the
 * session's checked appearance. One reading for n8n's Create Session, Node-RED's start node and `singpass-flows sign`.
 */
import { invalidInput } from '../errors';
import { checkSessionAppearance } from '../session/request-context';
import type { SessionAppearance } from '../session/types';
import { inSetting, type SettingLabels } from './labels';

export const APPEARANCE_PLACEMENTS = ['corner', 'rect', 'field', 'nextEmptyField', 'invisible'] as const;
export type AppearancePlacementChoice = (typeof APPEARANCE_PLACEMENTS)[number];

export interface AppearanceSettings {
  /** Default 'corner': the bottom-right corner of the last page unless `corner`/`page` say otherwise. */
  placement?: string;
  /** 'first', 'last' or a page number (text or number); empty: the default. */
  page?: string | number;
  corner?: string;
  /** "x1, y1, x2, y2" in PDF points (or the numbers). */
  rect?: string | number[];
  /** "width, height" in PDF points (or the numbers); for a corner. */
  size?: string | number[];
  /** The form's empty signature field, by name. */
  field?: string;
  /** A PNG or JPEG: bytes or base64. */
  image?: Buffer | string;
}

function numbers(v: string | number[] | undefined, count: number, field: string): number[] | undefined {
  if (v === undefined || v === '') return undefined;
  const list = Array.isArray(v) ? v : v.split(/[\s,]+/).filter(Boolean).map(Number);
  if (list.length !== count || list.some((n) => typeof n !== 'number' || !Number.isFinite(n))) {
    throw invalidInput(field, `must be ${count} numbers separated by commas (PDF points)`);
  }
  return list;
}

function page(v: string | number | undefined): number | 'first' | 'last' | undefined {
  if (v === undefined || v === '') return undefined;
  if (v === 'first' || v === 'last') return v;
  const n = typeof v === 'number' ? v : /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1) throw invalidInput('appearance.page', "must be 'first', 'last' or a page number (1, 2, …)");
  return n;
}

/**
 * The session's appearance from form settings; undefined for 'invisible'. Errors name the front end's own field
 * when `labels` map the keys (`appearance.page`, `appearance.rect`, …).
 */
export function appearanceFromSettings(s: AppearanceSettings, labels?: SettingLabels): SessionAppearance | undefined {
  const run = () => {
    const choice = (s.placement || 'corner') as AppearancePlacementChoice;
    if (!APPEARANCE_PLACEMENTS.includes(choice)) throw invalidInput('appearance.placement', `must be one of ${APPEARANCE_PLACEMENTS.join(', ')}`);
    if (choice === 'invisible') return undefined;
    const image = Buffer.isBuffer(s.image) ? s.image.toString('base64') : s.image || undefined;
    const common = image !== undefined ? { image } : {};
    if (choice === 'field') {
      if (!s.field) throw invalidInput('appearance.field', 'name the form’s empty signature field');
      return checkSessionAppearance({ field: s.field, ...common });
    }
    if (choice === 'nextEmptyField') return checkSessionAppearance({ nextEmptyField: true, ...pageAndCorner(s), ...common });
    if (choice === 'rect') {
      const rect = numbers(s.rect, 4, 'appearance.rect');
      if (!rect) throw invalidInput('appearance.rect', 'give the box as x1, y1, x2, y2 in PDF points');
      return checkSessionAppearance({ rect, ...(page(s.page) !== undefined ? { page: page(s.page) } : {}), ...common });
    }
    return checkSessionAppearance({ ...pageAndCorner(s), ...common });
  };
  return labels ? inSetting(labels, 'appearance', run) : run();
}

/** Page, corner and size of a box placed by corner (also where "next empty field" goes when the form has none). */
function pageAndCorner(s: AppearanceSettings): Record<string, unknown> {
  const p = page(s.page);
  const size = numbers(s.size, 2, 'appearance.size');
  return { ...(p !== undefined ? { page: p } : {}), ...(s.corner ? { corner: s.corner } : {}), ...(size ? { size } : {}) };
}
