'use client';
// The VM page's tabs, in one list: adding a tab (the consoles' Console and Terminal) is one entry here.
// `?tab=<id>` selects it, so every tab has its own reloadable URL.
import type { ComponentType } from 'react';
import type { VmRow } from '../../lib/model';
import { ConsoleTab } from '../console/ConsoleTab';
import { CloudInitTab } from './CloudInitTab';
import { TerminalTab } from '../console/TerminalTab';
import { HardwareTab } from './HardwareTab';
import { EventsTab } from './observe/EventsTab';
import { OptionsTab } from './OptionsTab';
import { SnapshotsTab } from './SnapshotsTab';
import { SummaryTab } from './SummaryTab';
import { YamlTab } from './YamlTab';

export interface VmTabProps {
  vm: VmRow;
  /** Read-only callers see no state-changing controls. */
  readOnly: boolean;
}

export interface VmTab {
  id: string;
  label: string;
  Component: ComponentType<VmTabProps>;
  /** Hide the tab when this returns false (e.g. a console for a VM that is not running). Default: always shown. */
  visible?: (vm: VmRow) => boolean;
}

export const VM_TABS: VmTab[] = [
  { id: 'summary', label: 'Summary', Component: SummaryTab },
  { id: 'yaml', label: 'YAML', Component: YamlTab },
  { id: 'console', label: 'Console', Component: ConsoleTab },
  { id: 'terminal', label: 'Terminal', Component: TerminalTab },
  { id: 'hardware', label: 'Hardware', Component: HardwareTab },
  { id: 'options', label: 'Options', Component: OptionsTab },
  { id: 'cloudinit', label: 'Cloud-Init', Component: CloudInitTab },
  { id: 'snapshots', label: 'Snapshots', Component: SnapshotsTab },
  { id: 'events', label: 'Events', Component: EventsTab },
];

export const DEFAULT_TAB = 'summary';
